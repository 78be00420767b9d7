//! The sender's side of an arriving ACK (Linux `tcp_ack`), in named phases:
//! 1. the send window update (RFC 9293 §3.10.7.4, Linux `tcp_may_update_window`);
//! 2. SACK-block classification (`sack_classify`, a pure function);
//! 3. marking what was delivered on the scoreboard (SACK, then cumulative);
//! 4. the RTT sample (Karn's rule, RFC 6298 §3; RFC 7323 §4 for timestamps);
//! 5. the loss and congestion reaction (RACK, undo, recovery/CWR entry: Linux
//!    `tcp_fastretrans_alert`), shared by new and old ACKs;
//! 6. TLP episode end (RFC 8985 §7.4), window growth (PRR or `cong_avoid`);
//! 7. the timer re-arm (RFC 6298 §5.2-5.3, Linux `tcp_set_xmit_timer`).

use super::rto_timer::RtoArm;
use super::sack_classify::{self, SackClass, SackEdges};
use super::undo::AckFlags;
use super::{CaState, Connection};
use crate::cc::{AckSample, CongestionCause, SentInfo};
use crate::conn::timer::Timer;
use crate::event::TraceEvent;
use crate::recovery::scoreboard::SentSegment;
use crate::recovery::tlp::TlpOutcome;
use brisk_time::{Duration, Instant};
use brisk_wire::{Flags, TcpRepr};

/// The sender's state just before an ACK is processed.
#[derive(Clone, Copy, Debug)]
struct Prior {
    una: u64,
    in_flight: u32,
    highest_sacked: u64,
}

/// What phase 3 found: the delivered segments, summarised.
#[derive(Clone, Copy, Debug, Default)]
struct Delivery {
    /// Segments newly (S)ACKed.
    segs: u32,
    /// Of those, by SACK.
    sacked: u32,
    /// Payload bytes newly ACKed cumulatively.
    bytes: u64,
    /// A never-retransmitted segment at or below the recovery point was (S)ACKed.
    orig_acked: bool,
    /// A cumulatively ACKed segment had been retransmitted.
    retrans_acked: bool,
    /// A never-retransmitted segment below the highest SACKed one was delivered.
    reordering: bool,
    /// Earliest send time of never-retransmitted segments, cumulatively ACKed.
    oldest_clean: Option<Instant>,
    /// The same for SACKed ones.
    sack_clean: Option<Instant>,
    /// Send-time state of the most recently sent segment delivered.
    newest: Option<SentInfo>,
}

/// What phases 2-4 found (`Connection::ack_facts`); the default is what they find
/// for an ACK that changes nothing.
#[derive(Clone, Copy, Debug, Default)]
struct AckFacts {
    d: Delivery,
    /// A plausible D-SACK block.
    dsack: Option<(u64, u64)>,
    /// RDB: the ACK revealed losses a bundle hid.
    bundle_loss: bool,
    /// RC3: a low-priority ACK.
    low: bool,
    sample: Option<Duration>,
}

/// An old ACK (reordered behind a newer one) or a current one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckAge {
    Old,
    Current { ece: bool },
}

impl Connection {
    pub(super) fn process_ack(&mut self, now: Instant, seg: &TcpRepr<'_>, ack: i64, seq: i64) {
        // An old ACK (reordered behind a newer one): its cumulative ACK, window and
        // timing are stale, but its SACK blocks may be news. Like Linux `tcp_ack`'s
        // `old_ack` path, only SACK tagging and loss detection run for it.
        let old = ack < self.sub.snd.snd_una as i64;
        if ack < 0 || (old && (!self.sub.opts.sack_ok || seg.sack.is_empty())) {
            return;
        }
        let ack = ack as u64;
        // One body for every ACK; for an ACK that changes nothing but the window (every
        // ACK a one-way transfer's receiver sees) its instance skips the phases that
        // provably find nothing (`ack_changes_nothing`), and nothing else.
        if self.ack_changes_nothing(seg, ack) {
            self.ack_body::<true>(now, seg, ack, seq, false);
        } else {
            self.ack_body::<false>(now, seg, ack, seq, old);
        }
    }

    /// The orchestration of an ACK: each phase takes the facts the previous ones
    /// found. `IDLE`: [`ack_changes_nothing`](Self::ack_changes_nothing) holds, which
    /// proves that phases 2-4 find nothing (no SACK block, no D-SACK, no delivery, no
    /// RTT sample, no mechanism acting), that the ACK carries no ECE and that it is
    /// no duplicate ACK (nothing is outstanding); those are taken as found, every other
    /// phase runs as for any ACK.
    #[inline(always)]
    fn ack_body<const IDLE: bool>(
        &mut self,
        now: Instant,
        seg: &TcpRepr<'_>,
        ack: u64,
        seq: i64,
        old: bool,
    ) {
        let prior = Prior {
            una: self.sub.snd.snd_una,
            in_flight: self.sub.loss.board.in_flight(),
            highest_sacked: self.sub.loss.board.highest_sacked(),
        };
        // Any acceptable ACK shows the peer is alive (Linux resets `icsk_probes_out`).
        self.sub.probes.persist_probes = 0;
        let window_changed = self.update_send_window(seg, ack, seq, old, prior.una);
        let facts = if IDLE {
            AckFacts::default()
        } else {
            self.ack_facts(now, seg, ack, old, prior)
        };
        let mut flags = AckFlags {
            una_advanced: ack > prior.una,
            data_sacked: facts.d.sacked > 0,
            orig_acked: facts.d.orig_acked,
            dupack: false,
            ece: false,
            tsecr: seg
                .timestamps
                .filter(|t| self.sub.opts.ts_ok && t.tsecr != 0)
                .map(|t| t.tsecr),
        };
        let d = facts.d;
        if old {
            self.old_ack(now, &facts, &flags, prior);
            return;
        }
        if let Some(rtt) = facts.sample {
            // The refresh of the controller's view that `rtt_sample` does is left to
            // the one just below: nothing in between reads or changes what it copies.
            self.note_rtt_sample(now, rtt);
        }

        let ece = !IDLE && self.sub.opts.ecn_ok && seg.flags.contains(Flags::ECE);
        let is_dupack = !IDLE
            && !facts.low
            && ack == prior.una
            && seg.payload.is_empty()
            && !window_changed
            && !seg.flags.fin()
            && !self.sub.loss.board.is_empty();
        self.sub.cong.vars.delivered += u64::from(d.segs);
        self.refresh_cc_state();
        // Window growth from a low ACK only for what it cumulatively ACKed of the
        // primary loop's segments (the Linux patch credits those on the next
        // priority-0 ACK; brisk at once, spec A4(e)); SACKs on it grow nothing.
        let cc_segs = if facts.low { d.segs - d.sacked } else { d.segs };
        let ack_sample = AckSample {
            now,
            acked_segs: cc_segs,
            acked_bytes: d.bytes,
            rtt: facts.sample,
            newest_acked: d.newest,
            prior_in_flight: prior.in_flight,
            ece,
        };
        if cc_segs > 0 || d.bytes > 0 {
            self.sub
                .cong
                .ctrl
                .on_ack(&mut self.sub.cong.vars, &ack_sample);
        }
        if !facts.low {
            self.detect_losses(now, d.segs, facts.dsack.is_some());
            if !self.sub.opts.sack_ok {
                self.newreno_detect(ack, prior.una, is_dupack);
            }
        }
        flags.dupack = is_dupack && facts.dsack.is_none();
        flags.ece = ece;
        self.alert(now, AckAge::Current { ece }, &flags, prior);
        if facts.bundle_loss && self.sub.cong.ca_state < CaState::Cwr {
            self.enter_cwr(now, prior.in_flight, CongestionCause::BundleLoss);
            self.info.rdb_loss_cwr += 1;
        }
        let delivered = d.segs > 0;
        self.ack_finish(
            now,
            ack,
            prior,
            facts.dsack,
            is_dupack,
            cc_segs,
            delivered,
            &ack_sample,
        );
    }

    /// Linux `old_ack`: delivery and loss detection only; no RTT sample (the ACK was
    /// held back), no window growth, no TLP or timer changes.
    fn old_ack(&mut self, now: Instant, facts: &AckFacts, flags: &AckFlags, prior: Prior) {
        let d = facts.d;
        self.sub.cong.vars.delivered += u64::from(d.segs);
        self.refresh_cc_state();
        self.detect_losses(now, d.segs, facts.dsack.is_some());
        self.alert(now, AckAge::Old, flags, prior);
        self.trace_cwnd(now);
    }

    /// Phases 2-4: the SACK blocks classified, D-SACK accounted, the delivery marked,
    /// the mechanisms' view of the ACK and the RTT sample.
    fn ack_facts(
        &mut self,
        now: Instant,
        seg: &TcpRepr<'_>,
        ack: u64,
        old: bool,
        prior: Prior,
    ) -> AckFacts {
        let sack = self.classify_sack(seg, ack, prior.una, old);
        // D-SACK accounting for undo, before the scoreboard forgets what it covers; a
        // dubious D-SACK is ignored from here on (Linux `tcp_check_dsack`).
        let dsack_plausible = sack
            .dsack
            .is_some_and(|(l, r)| self.account_dsack(l, r, prior.una));
        let bundle_loss = !old
            && self
                .mech
                .hidden_loss(&self.sub.loss.board, ack, prior.una, sack.dsack);
        let d = self.mark_delivered(now, &sack, ack, prior);
        if sack.dsack.is_some() {
            self.info.dsack_received += 1;
        }
        let dsack = sack.dsack.filter(|_| dsack_plausible);
        if dsack.is_some() {
            self.sub
                .loss
                .rack
                .on_dsack(self.sub.snd.snd_una, self.snd_max());
        }
        // RC3 (`rc3_send`): a low-priority ACK updates the scoreboard and the
        // cumulative ACK only.
        let low = !old
            && self
                .mech
                .ack_is_low(self.rx_dscp, ack > prior.una, d.sacked > 0, sack.len > 0);
        let sample = if low {
            None
        } else {
            self.ack_rtt_sample(now, seg, &d, ack > prior.una)
        };
        AckFacts {
            d,
            dsack,
            bundle_loss,
            low,
            sample,
        }
    }

    /// Phases 6-7: the TLP episode's end, window growth, the round, the timers.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn ack_finish(
        &mut self,
        now: Instant,
        ack: u64,
        prior: Prior,
        dsack: Option<(u64, u64)>,
        is_dupack: bool,
        cc_segs: u32,
        delivered: bool,
        ack_sample: &AckSample,
    ) {
        // TLP episode end (RFC 8985 §7.4).
        let dsack_for_probe = match (dsack, self.sub.loss.tlp.high_seq) {
            (Some((_, r)), Some(h)) => r <= h,
            _ => false,
        };
        if self.sub.loss.tlp.on_ack(ack, dsack_for_probe, is_dupack) == TlpOutcome::Loss {
            self.tlp_loss_response(now);
        }
        self.grow_window(now, cc_segs, ack_sample);
        self.end_round();
        self.rearm_after_ack(now, ack > prior.una, delivered);
    }

    /// Whether this ACK can move nothing but the send window: it acknowledges no new
    /// data and carries no SACK block while nothing is outstanding, in the Open state,
    /// with no ECE, no TLP episode and no pending D-SACK undo. The receiver of a
    /// one-way transfer sees only such ACKs, on every data segment. Linux's
    /// `tcp_rcv_established` fast path likewise calls `tcp_ack` on a data segment only
    /// when `ack_seq != snd_una` would change something (header prediction).
    ///
    /// What `process_ack` does with such an ACK, phase by phase, and why its `IDLE`
    /// instance ([`ack_body`](Self::ack_body)) may take phases 2-4 as finding nothing:
    /// - no blocks: `classify_sack` returns the default (no D-SACK, nothing ignored);
    /// - `ack == snd_una` with an empty scoreboard: `mark_delivered` delivers nothing,
    ///   so there is no RTT sample (no delivery, SND.UNA did not advance), no
    ///   `on_ack`, and `detect_losses` / `newreno_detect` have nothing to do (no
    ///   delivery, no D-SACK, no duplicate ACK: that needs data outstanding);
    /// - sender mechanisms are asked once (`Mechanisms::quiet_on_idle_ack`): RDB's
    ///   hidden-loss check needs SND.UNA to advance; RC3 acts (it counts low ACKs);
    /// - `alert` in Open without ECE, with no lost or SACKed segment and no D-SACK undo
    ///   due (`all_retrans_dsacked`), only clears the retransmission stamp (nothing
    ///   retransmitted is outstanding);
    /// - the TLP has no episode to end; `grow_window` outside a reduction grows
    ///   nothing without deliveries, and only re-clamps cwnd and traces it.
    fn ack_changes_nothing(&self, seg: &TcpRepr<'_>, ack: u64) -> bool {
        let b = &self.sub.loss.board;
        ack == self.sub.snd.snd_una
            && seg.sack.is_empty()
            && b.is_empty()
            && self.sub.cong.ca_state == CaState::Open
            && !(self.sub.opts.ecn_ok && seg.flags.contains(Flags::ECE))
            && self.sub.loss.tlp.high_seq.is_none()
            && !self.sub.loss.undo.all_retrans_dsacked()
            && self.mech.quiet_on_idle_ack()
    }

    /// Phase 1 (RFC 9293 §3.10.7.4, as Linux `tcp_may_update_window`): a duplicate ACK
    /// from the same sequence point may only open the window, so a reordered older one
    /// (see `paws`) never restores a stale, smaller window. Returns whether the
    /// advertised window differs from the one we had (a window update is no dupack).
    fn update_send_window(
        &mut self,
        seg: &TcpRepr<'_>,
        ack: u64,
        seq: i64,
        old: bool,
        prior_una: u64,
    ) -> bool {
        let wnd = u64::from(seg.window) << self.sub.opts.snd_wscale;
        let changed = wnd != self.sub.snd.snd_wnd;
        if !old
            && (ack > prior_una
                || seq > self.sub.snd.snd_wl1
                || (seq == self.sub.snd.snd_wl1 && wnd > self.sub.snd.snd_wnd))
        {
            self.sub.snd.snd_wnd = wnd;
            self.sub.snd.snd_wl1 = seq;
            self.sub.snd.max_snd_wnd = self.sub.snd.max_snd_wnd.max(wnd);
        }
        changed
    }

    /// Phase 2: the ACK's SACK blocks (RFC 2018), D-SACK (RFC 2883 §4), classified
    /// against the highest sequence ever sent.
    fn classify_sack(
        &mut self,
        seg: &TcpRepr<'_>,
        ack: u64,
        prior_una: u64,
        old: bool,
    ) -> SackClass {
        // No blocks (every ACK of a loss-free transfer): nothing to classify, count or
        // hide from RC3; `classify` of no blocks is the default.
        if !self.sub.opts.sack_ok || seg.sack.is_empty() {
            return SackClass::default();
        }
        let mut raw = [(0i64, 0i64); 4];
        let mut n = 0;
        for b in seg.sack.as_slice().iter().take(4) {
            raw[n] = (self.unwrap_ack(b.left), self.unwrap_ack(b.right));
            n += 1;
        }
        let edges = SackEdges {
            ack,
            prior_una,
            snd_max: self.snd_max(),
            old,
        };
        let mut class = sack_classify::classify(&raw[..n], edges);
        self.counters.sack_blocks_ignored += class.ignored;
        self.mech.on_sack_classified(&mut class);
        class
    }

    /// Phase 3: newly SACKed, then cumulatively ACKed segments leave the scoreboard's
    /// outstanding set; RACK learns each delivery; the send buffer frees what the
    /// cumulative ACK covers.
    fn mark_delivered(
        &mut self,
        now: Instant,
        sack: &SackClass,
        ack: u64,
        prior: Prior,
    ) -> Delivery {
        let min_rtt = self.sub.loss.rtt.min_rtt().unwrap_or(Duration::ZERO);
        let high_seq = self.sub.loss.high_seq;
        let mut d = Delivery::default();
        let rack = &mut self.sub.loss.rack;
        let rlp = self.mech.copies();
        let mut on_delivered = |s: &SentSegment, by_sack: bool| {
            d.segs += 1;
            d.sacked += u32::from(by_sack);
            d.retrans_acked |= !by_sack && s.ever_retrans;
            // RC3 (spec A4(d)): a segment the RLP also copied may have been delivered
            // by its copy, so its timing says nothing about this send.
            let copied = !s.ever_retrans && rlp.is_some_and(|r| r.overlaps_sent(s.start, s.end));
            if !s.ever_retrans && !copied {
                // Linux `FLAG_ORIG_SACK_ACKED`, F-RTO's evidence (RFC 5682 §3.1 step 3b).
                d.orig_acked |= s.end <= high_seq;
                let slot = if by_sack {
                    &mut d.sack_clean
                } else {
                    &mut d.oldest_clean
                };
                *slot = Some(slot.map_or(s.xmit_ts, |t| t.min(s.xmit_ts)));
                if s.end < prior.highest_sacked {
                    d.reordering = true;
                }
            }
            if !matches!(d.newest, Some(n) if s.info.sent_at < n.sent_at) {
                d.newest = Some(s.info);
            }
            if !copied {
                rack.on_delivered(now, s.xmit_ts, s.end, s.ever_retrans, min_rtt);
            }
        };
        if sack.len > 0 {
            self.sub
                .loss
                .board
                .sack(sack.blocks(), |s| on_delivered(s, true));
        }
        if ack > prior.una {
            self.sub
                .loss
                .board
                .ack_cumulative(ack, |s| on_delivered(s, false));
            self.sub.snd.snd_una = ack;
            // The stream bytes this ACK frees (through the subflow's map).
            let data_acked = self.sub.stream_acked(ack);
            let prev_data = self.sub.stream_acked(prior.una);
            // Bytes an ACK bump jumps over were never sent by the primary loop: they
            // grow no window (spec A4(c)), though they are acknowledged.
            let cc_acked = self.sub.stream_acked(ack.min(self.sub.snd.snd_nxt));
            d.bytes = cc_acked.saturating_sub(prev_data);
            self.stream.sendbuf.ack_to(data_acked);
            self.info.bytes_acked += data_acked.saturating_sub(prev_data);
            if let Some(bumped) = self.mech.on_cumulative_ack(ack, self.sub.snd.snd_nxt) {
                // The ACK bump (§4.1.1): the primary loop crossed the RLP's copies.
                self.sub.snd.snd_nxt = bumped;
                self.stream.sendbuf.mark_sent(data_acked);
            }
            self.sub.loss.backoff = 0;
            self.sub.loss.last_progress = now;
            self.sub.loss.dupacks = 0;
            self.stream.on_space_freed();
        }
        // What SACKs show beyond the primary loop is a mechanism's delivery (spec A5).
        self.mech
            .on_sacked_beyond(sack.blocks(), self.sub.snd.snd_nxt);
        if d.reordering {
            self.sub.loss.rack.on_reordering();
        }
        d
    }

    /// Phase 4 (Karn-safe, Linux `tcp_ack_update_rtt`): the oldest never-retransmitted
    /// segment cumulatively ACKed, else SACKed, else the timestamp echo. A cumulative
    /// ACK that also covers retransmitted data gives no sequence sample (Linux
    /// `FLAG_RETRANS_DATA_ACKED`): the originals behind the hole waited for the
    /// retransmission, so their "RTT" would include that wait.
    fn ack_rtt_sample(
        &self,
        now: Instant,
        seg: &TcpRepr<'_>,
        d: &Delivery,
        una_advanced: bool,
    ) -> Option<Duration> {
        let oldest_clean = d.oldest_clean.filter(|_| !d.retrans_acked);
        let sample = oldest_clean.or(d.sack_clean).map(|t| now - t);
        if sample.is_some() || !una_advanced || !self.sub.opts.ts_ok {
            return sample;
        }
        let ts = seg.timestamps.filter(|t| t.tsecr != 0)?;
        let ms = self.tsval(now).wrapping_sub(ts.tsecr);
        ((ms as i32) >= 0).then(|| Duration::from_millis(u64::from(ms)))
    }

    /// Phase 5a: RACK, or RFC 6675 DupThresh when RACK is off. (Peers without SACK
    /// add NewReno's duplicate-ACK counting after it.)
    fn detect_losses(&mut self, now: Instant, delivered: u32, dsack: bool) {
        if self.config.recovery.rack && (delivered > 0 || dsack) {
            self.rack_detect(now);
        } else if !self.config.recovery.rack && self.sub.opts.sack_ok && delivered > 0 {
            self.dupthresh_detect();
            self.early_retransmit(now);
        }
    }

    /// Phase 5b, the recovery state machine (Linux `tcp_fastretrans_alert`): undo and
    /// exits, then entries. An undo that cleared lost marks lets RACK look again, so a
    /// real loss among them starts a new recovery at once. The state machine, then recovery or CWR entry, then
    /// Open/Disorder. An old ACK never enters CWR and never reopens from Disorder
    /// (its SACK news can only add to what is SACKed).
    ///
    /// Inline: every ACK runs it, and for an idle ACK (`ack_body::<true>`) its
    /// arguments are constants.
    #[inline]
    fn alert(&mut self, now: Instant, age: AckAge, flags: &AckFlags, prior: Prior) {
        // A current ACK without ECE in Open with no D-SACK undo due, the common ACK of
        // a loss-free transfer: as Linux's `tcp_fastretrans_alert` looks further only
        // at a "dubious" ACK (`tcp_ack_is_dubious`), the undo and exit checks, which
        // Open does not have, are skipped. Exact: there `undo_and_exit` runs no exit
        // (those are for CWR and Recovery) and no undo (excluded here), only clears
        // the retransmission stamp when nothing retransmitted is outstanding, and
        // returns false (no lost marks cleared, so no second RACK pass).
        if self.sub.cong.ca_state == CaState::Open
            && age != AckAge::Old
            && !flags.ece
            && !self.sub.loss.undo.all_retrans_dsacked()
        {
            if !self.any_retrans_done() {
                self.sub.loss.undo.clear_stamp();
            }
        } else if self.undo_and_exit(now, flags) && self.config.recovery.rack {
            self.rack_detect(now);
        }
        let ece = age == AckAge::Current { ece: true };
        if self.sub.loss.board.lost_out() > 0 && self.sub.cong.ca_state < CaState::Recovery {
            self.enter_recovery(now, prior.in_flight, ece);
        } else if ece && self.sub.cong.ca_state < CaState::Cwr {
            self.enter_cwr(now, prior.in_flight, CongestionCause::Ecn);
        }
        if self.sub.cong.ca_state == CaState::Open && self.sub.loss.board.sacked_out() > 0 {
            self.sub.cong.ca_state = CaState::Disorder;
        } else if age != AckAge::Old
            && self.sub.cong.ca_state == CaState::Disorder
            && self.sub.loss.board.sacked_out() == 0
        {
            self.sub.cong.ca_state = CaState::Open;
        }
    }

    /// Phase 6 (Linux `tcp_cong_control`): PRR while reducing, else the controller's
    /// growth; then the clamp.
    fn grow_window(&mut self, now: Instant, delivered: u32, ack_sample: &AckSample) {
        if self.in_reduction() {
            if delivered > 0 {
                let cwnd = self
                    .sub
                    .loss
                    .prr
                    .on_ack(delivered, self.sub.loss.board.in_flight());
                self.set_cwnd(cwnd.max(1));
            }
        } else if delivered > 0 {
            self.refresh_cc_state();
            if let Some(slack) = self.config.congestion.cwnd_limited_slack {
                // Linux before 3.16 (`tcp_is_cwnd_limited(sk, prior_in_flight)`): also
                // cwnd-limited when in flight came within `slack` segments of cwnd
                // (`tcp_max_tso_deferred_mss` = 3), in slow start too. The RDB paper's
                // thin-stream senders ran with this rule (RDB §IV-B).
                let (cwnd, pif) = (self.sub.cong.vars.cwnd, ack_sample.prior_in_flight);
                self.sub.cong.vars.cwnd_limited = pif >= cwnd || cwnd - pif <= slack;
            }
            self.sub
                .cong
                .ctrl
                .cong_avoid(&mut self.sub.cong.vars, ack_sample);
            if std::mem::take(&mut self.sub.cong.vars.request_cwr) {
                // The controller's own reduction (Linux: `tcp_enter_cwr` from its
                // `cong_avoid`); growth and reduction never both happen on one ACK.
                self.enter_cwr(now, ack_sample.prior_in_flight, CongestionCause::Delay);
            }
        }
        self.set_cwnd(self.sub.cong.vars.cwnd);
        self.trace_cwnd(now);
    }

    /// A new round for cwnd-limited tracking once SND.UNA passes the round's end.
    fn end_round(&mut self) {
        if self.sub.snd.snd_una >= self.sub.cong.round_end {
            self.sub.cong.round_end = self.sub.snd.snd_nxt;
            self.sub.cong.max_packets_out = self.sub.loss.board.packets_out();
            self.sub.cong.is_cwnd_limited = false;
        }
    }

    /// Phase 7 (RFC 6298 §5.2-5.3, Linux `tcp_set_xmit_timer`). Inline for the same
    /// reason as `alert`.
    #[inline]
    fn rearm_after_ack(&mut self, now: Instant, una_advanced: bool, delivered: bool) {
        let reneged = una_advanced && self.sub.loss.board.head_sacked();
        if self.sub.loss.board.is_empty() {
            self.disarm_rto();
        } else if reneged {
            // SACK reneging: neither a full RTO nor a probe, a short timeout.
            self.arm_rto(now, RtoArm::Reneging);
        } else if una_advanced {
            self.arm_rto(now, RtoArm::Progress);
        }
        if (una_advanced || delivered) && !reneged {
            self.schedule_tlp(now);
        }
        self.stop_persist_if_open();
    }

    /// The peer's window is open: no zero-window probing.
    fn stop_persist_if_open(&mut self) {
        if self.sub.snd.snd_wnd > 0 && self.sub.timers.is_set(Timer::Persist) {
            self.sub.timers.stop(Timer::Persist);
            self.sub.probes.persist_backoff = 0;
        }
    }

    /// One RTT sample into the estimator, CC state and trace.
    pub(super) fn rtt_sample(&mut self, now: Instant, rtt: Duration) {
        self.note_rtt_sample(now, rtt);
        self.refresh_cc_state();
    }

    /// `rtt_sample` for a caller that refreshes the CC state itself afterwards.
    fn note_rtt_sample(&mut self, now: Instant, rtt: Duration) {
        self.sub.loss.rtt.on_sample(now, rtt);
        self.trace(TraceEvent::RttSample { at: now, rtt });
    }
}
