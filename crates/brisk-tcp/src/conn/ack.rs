//! The sender's side of an arriving ACK (Linux `tcp_ack`): window update, SACK and
//! cumulative ACK on the scoreboard, RTT sampling (Karn's rule, RFC 6298 §3; RFC 7323
//! §4 for timestamps), RACK loss detection, the recovery state machine (RFC 6582
//! recovery point, RFC 6937 PRR), ECN reaction (RFC 3168 §6.1.2), TLP episode ends,
//! and the congestion controller callbacks at Linux's points.

use super::undo::AckFlags;
use super::{CaState, Connection};
use crate::cc::{AckSample, SentInfo};
use crate::conn::timer::Timer;
use crate::event::{Event, TraceEvent};
use crate::recovery::rack::DUPTHRESH;
use crate::recovery::tlp::{self, TlpOutcome};
use brisk_time::{Duration, Instant};
use brisk_wire::{Flags, TcpRepr};

impl Connection {
    pub(super) fn process_ack(&mut self, now: Instant, seg: &TcpRepr<'_>, ack: i64, seq: i64) {
        // An old ACK (reordered behind a newer one): its cumulative ACK, window and
        // timing are stale, but its SACK blocks may be news. Like Linux `tcp_ack`'s
        // `old_ack` path, only SACK tagging and loss detection run for it.
        let old = ack < self.snd.snd_una as i64;
        if ack < 0 || (old && (!self.opts.sack_ok || seg.sack.is_empty())) {
            return;
        }
        let ack = ack as u64;
        let prior_una = self.snd.snd_una;
        let prior_in_flight = self.loss.board.in_flight();
        let prior_highest_sacked = self.loss.board.highest_sacked();
        // Any acceptable ACK shows the peer is alive (Linux resets `icsk_probes_out`).
        self.probes.persist_probes = 0;

        // Window update (RFC 9293 §3.10.7.4, as Linux `tcp_may_update_window`): a
        // duplicate ACK from the same sequence point may only open the window, so a
        // reordered older one (see `paws`) never restores a stale, smaller window.
        let wnd = u64::from(seg.window) << self.opts.snd_wscale;
        let window_changed = wnd != self.snd.snd_wnd;
        if !old
            && (ack > prior_una
                || seq > self.snd.snd_wl1
                || (seq == self.snd.snd_wl1 && wnd > self.snd.snd_wnd))
        {
            self.snd.snd_wnd = wnd;
            self.snd.snd_wl1 = seq;
            self.snd.max_snd_wnd = self.snd.max_snd_wnd.max(wnd);
        }

        // SACK blocks (RFC 2018), D-SACK (RFC 2883 §4).
        let mut blocks = [(0u64, 0u64); 4];
        let mut nblocks = 0;
        let mut dsack: Option<(u64, u64)> = None;
        if self.opts.sack_ok {
            let raw = seg.sack.as_slice();
            for (i, b) in raw.iter().enumerate() {
                let l = self.unwrap_ack(b.left);
                let r = self.unwrap_ack(b.right);
                if l >= r || l < 0 {
                    self.counters.sack_blocks_ignored += 1;
                    continue;
                }
                let (l, r) = (l as u64, r as u64);
                if i == 0 {
                    let below_ack = r <= ack;
                    let inside_second = raw.get(1).is_some_and(|b2| {
                        let l2 = self.unwrap_ack(b2.left);
                        let r2 = self.unwrap_ack(b2.right);
                        l as i64 >= l2 && r as i64 <= r2
                    });
                    if below_ack || inside_second {
                        dsack = Some((l, r));
                        continue;
                    }
                }
                if old && r <= prior_una {
                    // Reported before SND.UNA passed it: nothing left to tag.
                    continue;
                }
                if l < ack || r > self.snd.snd_nxt {
                    self.counters.sack_blocks_ignored += 1;
                    continue;
                }
                blocks[nblocks] = (l, r);
                nblocks += 1;
            }
        }

        // D-SACK accounting for undo, before the scoreboard forgets what it covers; a
        // dubious D-SACK is ignored from here on (Linux `tcp_check_dsack`).
        let dsack_plausible = dsack.is_some_and(|(l, r)| self.account_dsack(l, r, prior_una));

        // Scoreboard: newly SACKed, then cumulatively ACKed segments.
        let min_rtt = self.loss.rtt.min_rtt().unwrap_or(Duration::ZERO);
        let high_seq = self.loss.high_seq;
        let mut delivered = 0u32;
        let mut sacked_now = 0u32;
        let mut orig_acked = false;
        let mut retrans_acked = false;
        let mut reordering = false;
        let mut oldest_clean: Option<Instant> = None;
        let mut sack_clean: Option<Instant> = None;
        let mut newest: Option<SentInfo> = None;
        let rack = &mut self.loss.rack;
        let mut on_delivered = |s: &crate::recovery::scoreboard::SentSegment, by_sack: bool| {
            delivered += 1;
            sacked_now += u32::from(by_sack);
            retrans_acked |= !by_sack && s.ever_retrans;
            if !s.ever_retrans {
                // Linux `FLAG_ORIG_SACK_ACKED`, F-RTO's evidence (RFC 5682 §3.1 step 3b).
                orig_acked |= s.end <= high_seq;
                let slot = if by_sack {
                    &mut sack_clean
                } else {
                    &mut oldest_clean
                };
                *slot = Some(slot.map_or(s.xmit_ts, |t| t.min(s.xmit_ts)));
                if s.end < prior_highest_sacked {
                    reordering = true;
                }
            }
            if !matches!(newest, Some(n) if s.info.sent_at < n.sent_at) {
                newest = Some(s.info);
            }
            rack.on_delivered(now, s.xmit_ts, s.end, s.ever_retrans, min_rtt);
        };
        self.loss
            .board
            .sack(&blocks[..nblocks], |s| on_delivered(s, true));
        let mut acked_bytes = 0u64;
        if ack > prior_una {
            self.loss
                .board
                .ack_cumulative(ack, |s| on_delivered(s, false));
            self.snd.snd_una = ack;
            let fin_end = self.snd.fin_seq.map_or(u64::MAX, |f| f);
            let data_acked = ack.min(fin_end).saturating_sub(1);
            let prev_data = prior_una.min(fin_end).saturating_sub(1);
            acked_bytes = data_acked.saturating_sub(prev_data);
            self.snd.sendbuf.ack_to(data_acked);
            self.info.bytes_acked += acked_bytes;
            self.loss.backoff = 0;
            self.loss.last_progress = now;
            self.loss.dupacks = 0;
            if self.snd.writable_wanted && self.snd.sendbuf.capacity() > 0 && !self.snd.fin_queued {
                self.snd.writable_wanted = false;
                self.push_event(Event::Writable);
            }
        }
        if reordering {
            self.loss.rack.on_reordering();
        }
        if dsack.is_some() {
            self.info.dsack_received += 1;
        }
        let dsack = dsack.filter(|_| dsack_plausible);
        if dsack.is_some() {
            self.loss.rack.on_dsack(self.snd.snd_una, self.snd.snd_nxt);
        }
        let mut flags = AckFlags {
            una_advanced: ack > prior_una,
            data_sacked: sacked_now > 0,
            orig_acked,
            dupack: false,
            ece: false,
            tsecr: seg
                .timestamps
                .filter(|t| self.opts.ts_ok && t.tsecr != 0)
                .map(|t| t.tsecr),
        };

        // RTT sample (Karn-safe): oldest never-retransmitted segment cumulatively
        // ACKed, else SACKed, else the timestamp echo (Linux `tcp_ack_update_rtt`).
        // A cumulative ACK that also covers retransmitted data gives no sequence
        // sample (Linux `FLAG_RETRANS_DATA_ACKED`): the originals behind the hole
        // waited for the retransmission, so their "RTT" would include that wait.
        let oldest_clean = oldest_clean.filter(|_| !retrans_acked);
        let mut sample = oldest_clean.or(sack_clean).map(|t| now - t);
        if sample.is_none() && ack > prior_una && self.opts.ts_ok {
            if let Some(ts) = seg.timestamps.filter(|t| t.tsecr != 0) {
                let ms = self.tsval(now).wrapping_sub(ts.tsecr);
                if (ms as i32) >= 0 {
                    sample = Some(Duration::from_millis(u64::from(ms)));
                }
            }
        }
        if old {
            // Linux `old_ack`: delivery and loss detection only; no RTT sample (the
            // ACK was held back), no window growth, no TLP or timer changes.
            self.cong.vars.delivered += u64::from(delivered);
            self.refresh_cc_state();
            if self.config.rack && (delivered > 0 || dsack.is_some()) {
                self.rack_detect(now);
            } else if !self.config.rack && delivered > 0 {
                self.dupthresh_detect();
            }
            // Linux runs `tcp_fastretrans_alert` for old ACKs with SACK blocks too: a
            // D-SACK on one may undo.
            if self.undo_and_exit(now, &flags) && self.config.rack {
                self.rack_detect(now);
            }
            if self.loss.board.lost_out() > 0 && self.cong.ca_state < CaState::Recovery {
                self.enter_recovery(now, prior_in_flight, false);
            } else if self.cong.ca_state == CaState::Open && self.loss.board.sacked_out() > 0 {
                self.cong.ca_state = CaState::Disorder;
            }
            self.trace_cwnd(now);
            return;
        }
        if let Some(rtt) = sample {
            self.rtt_sample(now, rtt);
        }

        let ece = self.opts.ecn_ok && seg.flags.contains(Flags::ECE);
        let is_dupack = ack == prior_una
            && seg.payload.is_empty()
            && !window_changed
            && !seg.flags.fin()
            && !self.loss.board.is_empty();
        self.cong.vars.delivered += u64::from(delivered);
        self.refresh_cc_state();
        let ack_sample = AckSample {
            now,
            acked_segs: delivered,
            acked_bytes,
            rtt: sample,
            newest_acked: newest,
            prior_in_flight,
            ece,
        };
        if delivered > 0 || acked_bytes > 0 {
            self.cong.ctrl.on_ack(&mut self.cong.vars, &ack_sample);
        }

        // Loss detection.
        if self.config.rack && (delivered > 0 || dsack.is_some()) {
            self.rack_detect(now);
        } else if !self.config.rack && self.opts.sack_ok && delivered > 0 {
            self.dupthresh_detect();
        }
        if !self.opts.sack_ok {
            self.newreno_detect(ack, prior_una, is_dupack);
        }

        // Recovery state machine (Linux `tcp_fastretrans_alert`): exits and undo,
        // then entries. An undo that cleared lost marks lets RACK look again, so a
        // real loss among them starts a new recovery at once.
        flags.dupack = is_dupack && dsack.is_none();
        flags.ece = ece;
        if self.undo_and_exit(now, &flags) && self.config.rack {
            self.rack_detect(now);
        }
        if self.loss.board.lost_out() > 0 && self.cong.ca_state < CaState::Recovery {
            self.enter_recovery(now, prior_in_flight, ece);
        } else if ece && self.cong.ca_state < CaState::Cwr {
            self.enter_cwr(now, prior_in_flight);
        }
        if self.cong.ca_state == CaState::Open && self.loss.board.sacked_out() > 0 {
            self.cong.ca_state = CaState::Disorder;
        } else if self.cong.ca_state == CaState::Disorder && self.loss.board.sacked_out() == 0 {
            self.cong.ca_state = CaState::Open;
        }

        // TLP episode end (RFC 8985 §7.4).
        let dsack_for_probe = match (dsack, self.loss.tlp.high_seq) {
            (Some((_, r)), Some(h)) => r <= h,
            _ => false,
        };
        if self.loss.tlp.on_ack(ack, dsack_for_probe, is_dupack) == TlpOutcome::Loss {
            self.tlp_loss_response(now);
        }

        // Window (Linux `tcp_cong_control`): PRR while reducing, else growth.
        if matches!(self.cong.ca_state, CaState::Recovery | CaState::Cwr) {
            if delivered > 0 {
                let cwnd = self.loss.prr.on_ack(delivered, self.loss.board.in_flight());
                self.set_cwnd(cwnd.max(1));
            }
        } else if delivered > 0 {
            self.refresh_cc_state();
            self.cong.ctrl.cong_avoid(&mut self.cong.vars, &ack_sample);
        }
        self.set_cwnd(self.cong.vars.cwnd);
        self.trace_cwnd(now);

        // New round for cwnd-limited tracking.
        if self.snd.snd_una >= self.cong.round_end {
            self.cong.round_end = self.snd.snd_nxt;
            self.cong.max_packets_out = self.loss.board.packets_out();
            self.cong.is_cwnd_limited = false;
        }

        // Timers (RFC 6298 §5.2-5.3, Linux `tcp_set_xmit_timer`).
        if self.loss.board.is_empty() {
            self.timers.stop(Timer::Rto);
            self.timers.stop(Timer::Tlp);
            self.timers.stop(Timer::RackReorder);
            self.timers.stop(Timer::UserTimeout);
        } else if ack > prior_una {
            let rto = self.current_rto();
            self.timers.set(Timer::Rto, now + rto);
            if let Some(uto) = self.config.user_timeout {
                self.timers.set(Timer::UserTimeout, now + uto);
            }
        }
        if ack > prior_una || delivered > 0 {
            self.schedule_tlp(now);
        }
        if self.snd.snd_wnd > 0 && self.timers.is_set(Timer::Persist) {
            self.timers.stop(Timer::Persist);
            self.probes.persist_backoff = 0;
        }
    }

    /// One RTT sample into the estimator, CC state and trace.
    pub(super) fn rtt_sample(&mut self, now: Instant, rtt: Duration) {
        self.loss.rtt.on_sample(now, rtt);
        self.refresh_cc_state();
        self.trace(TraceEvent::RttSample { at: now, rtt });
    }

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
    fn dupthresh_detect(&mut self) {
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
    fn newreno_detect(&mut self, ack: u64, prior_una: u64, is_dupack: bool) {
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
        let allowed = self.config.tlp
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
        self.timers.set(Timer::Tlp, now + pto);
    }
}
