//! The sender's side of an arriving ACK (Linux `tcp_ack`), in named phases:
//! 1. the send window update (RFC 9293 §3.10.7.4, Linux `tcp_may_update_window`);
//! 2. SACK-block classification (`sack_classify`, a pure function);
//! 3. marking what was delivered on the scoreboard (SACK, then cumulative);
//! 4. the RTT sample (Karn's rule, RFC 6298 §3; RFC 7323 §4 for timestamps);
//! 5. the loss and congestion reaction (RACK, undo, recovery/CWR entry: Linux
//!    `tcp_fastretrans_alert`), shared by new and old ACKs;
//! 6. TLP episode end (RFC 8985 §7.4), window growth (PRR or `cong_avoid`);
//! 7. the timer re-arm (RFC 6298 §5.2-5.3, Linux `tcp_set_xmit_timer`).
//!
//! The connection only orchestrates: each phase hands values to a part's method
//! (loss recovery: `loss.rs`, `detect.rs`, `undo.rs`; congestion: `congestion.rs`;
//! the mechanisms: `mech.rs`) and passes on what it returns.

use super::loss::{Delivery, Entry, RtoPlan};
use super::rto_timer::RtoArm;
use super::sack_classify::{self, SackClass, SackEdges};
use super::undo::{AckFlags, CcSteps, SendEdges};
use super::Connection;
use crate::cc::{AckSample, AckTimestamps, CongestionCause};
use crate::conn::timer::Timer;
use crate::event::TraceEvent;
use brisk_time::{Duration, Instant};
use brisk_wire::{Flags, TcpRepr};

/// The sender's state just before an ACK is processed.
#[derive(Clone, Copy, Debug)]
struct Prior {
    una: u64,
    in_flight: u32,
    highest_sacked: u64,
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
    /// no duplicate ACK (nothing is outstanding); those are taken as found. The later
    /// phases run as for any ACK, with the loss part's half of that predicate
    /// (`LossRecovery::quiet`: nothing outstanding, Open, no TLP episode, no D-SACK
    /// undo due) handed to them as a fact: it answers their own checks of those
    /// conditions, so the undo checks, the entries, the TLP episode's end, PRR and the
    /// RTO plan fold to their answers for it without a second body.
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
            in_flight: self.sub.loss.in_flight(),
            highest_sacked: self.sub.loss.highest_sacked(),
        };
        let lost_before = self.info.lost;
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
            && self.sub.loss.outstanding();
        self.sub.cong.on_delivered(d.segs);
        self.refresh_cc_state();
        // Window growth from a low ACK only for what it cumulatively ACKed of the
        // primary loop's segments (the Linux patch credits those on the next
        // priority-0 ACK; brisk at once, spec A4(e)); SACKs on it grow nothing.
        let cc_segs = if facts.low { d.segs - d.sacked } else { d.segs };
        let mut ack_sample = AckSample {
            now,
            acked_segs: cc_segs,
            acked_bytes: d.bytes,
            rtt: facts.sample,
            newest_acked: d.newest,
            prior_in_flight: prior.in_flight,
            ece,
            ..Default::default()
        };
        if self.sub.cong.needs.timestamps && self.sub.opts.ts_ok {
            ack_sample.ts = self.ack_timestamps(now, seg);
        }
        if cc_segs > 0 || d.bytes > 0 {
            self.sub.cong.on_ack(&ack_sample);
        }
        if !facts.low {
            self.detect_losses(now, d.segs, facts.dsack.is_some());
            if !self.sub.opts.sack_ok {
                self.newreno_detect(ack, prior.una, is_dupack);
            }
        }
        flags.dupack = is_dupack && facts.dsack.is_none();
        flags.ece = ece;
        self.alert::<IDLE>(now, AckAge::Current { ece }, &flags, prior);
        // RFC 8382 §4's OWD sample for the host's shared-bottleneck detector, if it
        // runs one (`cc/sbd/host.rs`): only from an ACK that acknowledged new data,
        // whose TSecr echoes the segment that just arrived in order (a duplicate
        // ACK echoes an older one and would read as a longer delay).
        if !IDLE && ack > prior.una && self.sub.opts.ts_ok {
            if let Some(t) = seg.timestamps.filter(|t| t.tsecr != 0) {
                let lost = self.info.lost;
                self.sub
                    .cong
                    .ctrl
                    .on_owd(now, t.tsval, t.tsecr, d.segs, lost);
            }
        }
        if facts.bundle_loss && self.sub.loss.below_cwr() {
            self.enter_cwr(now, prior.in_flight, CongestionCause::BundleLoss);
            self.info.rdb_loss_cwr += 1;
        }
        if self.sub.cong.needs.rate_samples {
            ack_sample.rate = self.rate_sample(now, &facts, lost_before, prior.in_flight, ece);
        }
        self.ack_finish::<IDLE>(now, ack, prior, &facts, is_dupack, &ack_sample);
    }

    /// The ACK's timestamps for a controller that reads them (`CcNeeds::timestamps`):
    /// TSecr back on this side's clock (Linux `rcv_tsecr -= tp->tsoffset`) and the
    /// clock now, both without the connection's random offset.
    fn ack_timestamps(&self, now: Instant, seg: &TcpRepr<'_>) -> Option<AckTimestamps> {
        let t = seg.timestamps.filter(|t| t.tsecr != 0)?;
        Some(AckTimestamps {
            tsval: t.tsval,
            tsecr: t.tsecr.wrapping_sub(self.sub.opts.ts_offset),
            now: super::ts_clock(now, self.config.ts_clock_ppm),
        })
    }

    /// Phases 6-7: the TLP episode's end, window growth, the round, the timers.
    #[inline(always)]
    fn ack_finish<const IDLE: bool>(
        &mut self,
        now: Instant,
        ack: u64,
        prior: Prior,
        facts: &AckFacts,
        is_dupack: bool,
        ack_sample: &AckSample,
    ) {
        // TLP episode end (RFC 8985 §7.4).
        if self
            .sub
            .loss
            .probe_repaired_loss(IDLE, ack, facts.dsack, is_dupack)
        {
            self.tlp_loss_response(now);
        }
        self.grow_window(now, IDLE, ack_sample);
        let packets_out = self.sub.loss.packets_out();
        let (una, nxt) = (self.sub.snd.snd_una, self.sub.snd.snd_nxt);
        self.sub.cong.end_round(una, nxt, packets_out);
        // For an idle ACK SND.UNA did not move (`ack_changes_nothing`: ack == SND.UNA)
        // and nothing was delivered: constants, so its instance folds the plan
        // (`rearm_plan(true, false, false)`: disarm, no probe).
        let una_advanced = !IDLE && ack > prior.una;
        self.rearm_after_ack(now, IDLE, una_advanced, !IDLE && facts.d.segs > 0);
    }

    /// Linux `old_ack`: delivery and loss detection only; no RTT sample (the ACK was
    /// held back), no window growth, no TLP or timer changes. Rare (reordered
    /// ACKs), so out of line.
    #[cold]
    #[inline(never)]
    fn old_ack(&mut self, now: Instant, facts: &AckFacts, flags: &AckFlags, prior: Prior) {
        let d = facts.d;
        self.sub.cong.on_delivered(d.segs);
        self.refresh_cc_state();
        self.detect_losses(now, d.segs, facts.dsack.is_some());
        self.alert::<false>(now, AckAge::Old, flags, prior);
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
        let dsack_plausible = sack.dsack.is_some_and(|b| {
            let mss = self.sub.opts.mss;
            let max_len = self.sub.snd.max_snd_wnd.max(u64::from(mss));
            let retransmits = self.info.retransmits;
            self.sub
                .loss
                .account_dsack(b, prior.una, max_len, mss, retransmits)
        });
        let bundle_loss = !old
            && self
                .mech
                .hidden_loss(self.sub.loss.board(), ack, prior.una, sack.dsack);
        let d = self.mark_delivered(now, &sack, ack, prior);
        if sack.dsack.is_some() {
            self.info.dsack_received += 1;
        }
        let dsack = sack.dsack.filter(|_| dsack_plausible);
        if dsack.is_some() {
            let (una, snd_max) = (self.sub.snd.snd_una, self.snd_max());
            self.sub.loss.on_dsack(una, snd_max);
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
        ack == self.sub.snd.snd_una
            && seg.sack.is_empty()
            && self.sub.loss.quiet()
            && !(self.sub.opts.ecn_ok && seg.flags.contains(Flags::ECE))
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
        self.classify_sack_blocks(seg, ack, prior_una, old)
    }

    /// `classify_sack` for an ACK with blocks (only while data is lost or
    /// reordered): out of line, so the ACK path of a clean transfer stays small.
    #[cold]
    #[inline(never)]
    fn classify_sack_blocks(
        &mut self,
        seg: &TcpRepr<'_>,
        ack: u64,
        prior_una: u64,
        old: bool,
    ) -> SackClass {
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

    /// Phase 3: loss recovery marks what was delivered (`LossRecovery::deliver`);
    /// then the send space and the stream take the cumulative ACK, and the
    /// mechanisms what it and the SACKs show.
    fn mark_delivered(
        &mut self,
        now: Instant,
        sack: &SackClass,
        ack: u64,
        prior: Prior,
    ) -> Delivery {
        let mut d = self.sub.loss.deliver(
            now,
            sack.blocks(),
            ack,
            prior.una,
            prior.highest_sacked,
            self.mech.copies(),
        );
        if ack > prior.una {
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
            self.stream.on_space_freed();
        }
        // What SACKs show beyond the primary loop is a mechanism's delivery (spec A5).
        self.mech
            .on_sacked_beyond(sack.blocks(), self.sub.snd.snd_nxt);
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

    /// Phase 5b, the recovery state machine (Linux `tcp_fastretrans_alert`): loss
    /// recovery's undo checks and exits (`LossRecovery::undo_and_exit`, whose
    /// conclusions congestion control then applies), then the entries, then
    /// Open/Disorder. An undo that cleared lost marks lets RACK look again, so a real
    /// loss among them starts a new recovery at once. An old ACK never enters CWR and
    /// never reopens from Disorder (its SACK news can only add to what is SACKed).
    ///
    /// Inline: every ACK runs it, and for an idle ACK (`ack_body::<true>`) its
    /// arguments are constants, and `LossRecovery::quiet` a fact (`IDLE`).
    #[inline]
    fn alert<const IDLE: bool>(
        &mut self,
        now: Instant,
        age: AckAge,
        flags: &AckFlags,
        prior: Prior,
    ) {
        let current = age != AckAge::Old;
        if !self.sub.loss.needs_undo_checks(IDLE, current, flags.ece) {
            self.sub.loss.on_plain_ack(IDLE);
        } else if self.undo_and_exit(now, flags) && self.config.recovery.rack {
            self.rack_detect(now);
        }
        let ece = age == AckAge::Current { ece: true };
        match self.sub.loss.entry_due(IDLE, ece) {
            Some(Entry::Recovery) => self.enter_recovery(now, prior.in_flight, ece),
            Some(Entry::Cwr) => self.enter_cwr(now, prior.in_flight, CongestionCause::Ecn),
            None => {}
        }
        self.sub.loss.settle_disorder(IDLE, current);
    }

    /// Loss recovery's undo checks with the send side's edges as values; congestion
    /// control applies what they concluded. Returns whether lost marks were cleared.
    #[inline(never)]
    fn undo_and_exit(&mut self, now: Instant, flags: &AckFlags) -> bool {
        let (una, nxt, wnd) = (
            self.sub.snd.snd_una,
            self.sub.snd.snd_nxt,
            self.sub.snd.snd_wnd,
        );
        let unsent =
            self.has_unsent_data() || (self.stream.fin_queued && self.sub.snd.fin_seq.is_none());
        let edges = SendEdges {
            una,
            nxt,
            sack_ok: self.sub.opts.sack_ok,
            can_send_new: unsent && una + wnd > nxt,
        };
        let mut steps = CcSteps::new();
        let unmarked = self.sub.loss.undo_and_exit(flags, &edges, &mut steps);
        self.apply_steps(now, &steps);
        unmarked
    }

    /// Linux `tcp_rate_gen` after `tcp_fastretrans_alert` (so `losses` counts what
    /// this ACK marked lost): the rate sample of this ACK (`crate::rate`). `ca_rtt`
    /// as Linux's: the latest clean SACKed send, else the latest clean cumulatively
    /// ACKed one unless retransmitted data was ACKed, else the timestamp sample.
    /// `is_ack_delayed` as Linux's `FLAG_ACK_MAYBE_DELAYED`: one segment, sent
    /// alone, cumulatively ACKed with nothing SACKed, the next delivery after its send.
    #[inline(never)]
    fn rate_sample(
        &mut self,
        now: Instant,
        facts: &AckFacts,
        lost_before: u64,
        prior_in_flight: u32,
        ece: bool,
    ) -> crate::rate::RateSample {
        let d = &facts.d;
        let clean = d
            .newest_sack_clean
            .or(d.newest_clean.filter(|_| !d.retrans_acked));
        let rtt = clean.map(|t| now - t).or(facts.sample);
        let v = &mut self.sub.cong.vars;
        v.rate.lost = self.info.lost;
        v.ecn_ok = self.sub.opts.ecn_ok;
        // Linux `tcp_count_delivered(.., ece_ack)`: what an ECE-carrying ACK
        // delivered counts as CE-marked (BBR v3's mark ratio).
        if ece {
            v.rate.delivered_ce += u64::from(d.segs);
        }
        let ack_delayed = d.segs == 1
            && d.sacked == 0
            && v.sacked_out == 0
            && d.newest.is_some_and(|n| {
                n.in_flight_at_send <= 1 && n.delivered_at_send + 1 == v.delivered
            });
        let ack = crate::rate::AckDelivery {
            newest: d.newest.as_ref(),
            acked_sacked: d.segs,
            losses: (self.info.lost - lost_before) as u32,
            prior_in_flight,
            rtt,
            ack_delayed,
            ece,
        };
        crate::rate::generate(&mut v.rate, v.delivered, now, v.min_rtt, ack)
    }

    /// Phase 6 (Linux `tcp_cong_control`): PRR while reducing, else the controller's
    /// growth; then the clamp. `quiet`: `LossRecovery::quiet` held (Open). A
    /// controller with its own `cong_control` (BBR) sets cwnd on every ACK instead.
    /// With pacing on, the pacing rate follows.
    #[inline]
    fn grow_window(&mut self, now: Instant, quiet: bool, ack_sample: &AckSample) {
        let delivered = ack_sample.acked_segs;
        if self.sub.cong.needs.cong_control {
            self.refresh_cc_state();
            self.sub.cong.control(ack_sample);
        } else if self.sub.loss.reducing(quiet) {
            if delivered > 0 {
                let cwnd = self.sub.loss.prr_cwnd(delivered);
                self.sub.cong.set_cwnd(cwnd.max(1));
            }
        } else if delivered > 0 {
            self.refresh_cc_state();
            let slack = self.config.congestion.cwnd_limited_slack;
            if self.sub.cong.grow(ack_sample, slack) {
                // The controller's own reduction (Linux: `tcp_enter_cwr` from its
                // `cong_avoid`).
                self.enter_cwr(now, ack_sample.prior_in_flight, CongestionCause::Delay);
            }
        }
        let cwnd = self.sub.cong.window().0;
        self.sub.cong.set_cwnd(cwnd);
        if self.sub.cong.pacer.is_some() {
            self.refresh_cc_state();
            let packets_out = self.sub.loss.packets_out();
            self.sub.cong.update_pacing(packets_out);
        }
        self.trace_cwnd(now);
    }

    /// Phase 7 (RFC 6298 §5.2-5.3, Linux `tcp_set_xmit_timer`): loss recovery's plan
    /// applied to the timers. Inline (always) for the same reason as `alert`: the
    /// idle ACK's instance folds to disarming the RTO and the persist check.
    #[inline(always)]
    fn rearm_after_ack(&mut self, now: Instant, quiet: bool, una_advanced: bool, delivered: bool) {
        let (rto, probe) = self.sub.loss.rearm_plan(quiet, una_advanced, delivered);
        match rto {
            RtoPlan::Disarm => self.disarm_rto(),
            // SACK reneging: neither a full RTO nor a probe, a short timeout.
            RtoPlan::Reneging => self.arm_rto(now, RtoArm::Reneging),
            RtoPlan::Progress => self.arm_rto(now, RtoArm::Progress),
            RtoPlan::Keep => {}
        }
        if probe {
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
        self.sub.loss.on_rtt_sample(now, rtt);
        self.trace(TraceEvent::RttSample { at: now, rtt });
    }
}
