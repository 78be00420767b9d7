//! Loss recovery's behaviour, on its own part ([`LossRecovery`]): it takes an ACK's
//! facts and returns what it concluded, as values the connection hands on to
//! congestion control and the timers. It never reads the send space, congestion's
//! variables or the timers; what it needs of them comes in as arguments.
//!
//! Here: what the part shows congestion control ([`LossView`]), delivery marking
//! (Linux `tcp_sacktag_write_queue` / `tcp_clean_rtx_queue`), the state machine's
//! entries (Linux `tcp_enter_recovery`, `tcp_enter_cwr`, `tcp_enter_loss`,
//! `tcp_process_tlp_ack`), the TLP episode's end (RFC 8985 §7.4) and the timers an
//! ACK leaves (Linux `tcp_set_xmit_timer`). Detection is `detect.rs`, undo and the
//! exits `undo.rs`, both on this part too.

use super::mech::BundleView;
use super::parts::LossRecovery;
use super::CaState;
use crate::cc::SentInfo;
use crate::event::RetransmitKind;
use crate::rc3::rlp::Rlp;
use crate::recovery::scoreboard::{Scoreboard, SentSegment};
use crate::recovery::tlp::TlpOutcome;
use crate::recovery::undo::current_ssthresh;
use brisk_time::{Duration, Instant};

/// What loss recovery shows congestion control (the read-only inputs of `CcState`).
#[derive(Clone, Copy, Debug)]
pub(super) struct LossView {
    pub in_flight: u32,
    pub sacked_out: u32,
    pub srtt: Duration,
    pub min_rtt: Duration,
}

/// What delivery marking found: the delivered segments, summarised.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Delivery {
    /// Segments newly (S)ACKed.
    pub segs: u32,
    /// Of those, by SACK.
    pub sacked: u32,
    /// Payload bytes newly ACKed cumulatively (the connection fills it in).
    pub bytes: u64,
    /// A never-retransmitted segment at or below the recovery point was (S)ACKed.
    pub orig_acked: bool,
    /// A cumulatively ACKed segment had been retransmitted.
    pub retrans_acked: bool,
    /// A never-retransmitted segment below the highest SACKed one was delivered.
    pub reordering: bool,
    /// Earliest send time of never-retransmitted segments, cumulatively ACKed.
    pub oldest_clean: Option<Instant>,
    /// The same for SACKed ones.
    pub sack_clean: Option<Instant>,
    /// Send-time state of the most recently sent segment delivered.
    pub newest: Option<SentInfo>,
    /// Latest send time of never-retransmitted segments, cumulatively ACKed and
    /// SACKed (Linux `last_ackt`, `last_sackt`: the rate sample's `ca_rtt_us`).
    pub newest_clean: Option<Instant>,
    pub newest_sack_clean: Option<Instant>,
}

/// Which reduction an ACK starts (the entries of Linux `tcp_fastretrans_alert`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Entry {
    /// Segments are marked lost: fast recovery.
    Recovery,
    /// ECE without loss: CWR.
    Cwr,
}

/// What an ACK leaves of the retransmission timer (RFC 6298 §5.2-5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RtoPlan {
    /// Nothing is outstanding: every loss timer stops.
    Disarm,
    /// SACK reneging: a short timeout.
    Reneging,
    /// New data was ACKed with data outstanding: restart.
    Progress,
    /// Leave it as it is.
    Keep,
}

/// What an RTO does to the recovery state, decided before congestion control
/// responds (Linux `tcp_enter_loss`).
#[derive(Clone, Copy, Debug)]
pub(super) struct LossEpisode {
    /// No recovery was under way: F-RTO may run.
    new_recovery: bool,
    /// A new undo episode: ssthresh is cut once and the window saved.
    pub new_episode: bool,
    /// CWR or Recovery was reducing the window.
    in_reduction: bool,
    /// Fast recovery ends here (traced by the connection).
    pub leaves_recovery: bool,
}

impl LossRecovery {
    /// What congestion control reads of this part.
    #[inline]
    pub fn view(&self) -> LossView {
        LossView {
            in_flight: self.board.in_flight(),
            sacked_out: self.board.sacked_out(),
            srtt: self.rtt.srtt().unwrap_or(Duration::ZERO),
            min_rtt: self.rtt.min_rtt().unwrap_or(Duration::ZERO),
        }
    }

    /// In fast recovery or CWR, where PRR owns cwnd (`quiet`: Open, so not).
    #[inline]
    pub fn reducing(&self, quiet: bool) -> bool {
        !quiet && self.in_reduction()
    }

    /// In fast recovery or CWR, where PRR owns cwnd.
    #[inline]
    pub fn in_reduction(&self) -> bool {
        matches!(self.ca_state, CaState::Recovery | CaState::Cwr)
    }

    /// One RTT sample into the estimator.
    #[inline]
    pub fn on_rtt_sample(&mut self, now: Instant, rtt: Duration) {
        self.rtt.on_sample(now, rtt);
    }

    /// Delivery marking: newly SACKed, then (if `ack` passed `prior_una`) cumulatively
    /// ACKed segments leave the scoreboard's outstanding set; RACK learns each
    /// delivery. `copies`: RC3's loop, whose copies may have delivered a segment.
    pub fn deliver(
        &mut self,
        now: Instant,
        blocks: &[(u64, u64)],
        ack: u64,
        prior_una: u64,
        prior_highest_sacked: u64,
        copies: Option<&Rlp>,
    ) -> Delivery {
        let min_rtt = self.rtt.min_rtt().unwrap_or(Duration::ZERO);
        let high_seq = self.high_seq;
        let mut d = Delivery::default();
        let rack = &mut self.rack;
        let mut on_delivered = |s: &SentSegment, by_sack: bool| {
            d.segs += 1;
            d.sacked += u32::from(by_sack);
            d.retrans_acked |= !by_sack && s.ever_retrans;
            // RC3 (spec A4(d)): a segment the RLP also copied may have been delivered
            // by its copy, so its timing says nothing about this send.
            let copied = !s.ever_retrans && copies.is_some_and(|r| r.overlaps_sent(s.start, s.end));
            if !s.ever_retrans && !copied {
                // Linux `FLAG_ORIG_SACK_ACKED`, F-RTO's evidence (RFC 5682 §3.1 step 3b).
                d.orig_acked |= s.end <= high_seq;
                let slot = if by_sack {
                    &mut d.sack_clean
                } else {
                    &mut d.oldest_clean
                };
                *slot = Some(slot.map_or(s.xmit_ts, |t| t.min(s.xmit_ts)));
                let last = if by_sack {
                    &mut d.newest_sack_clean
                } else {
                    &mut d.newest_clean
                };
                *last = Some(last.map_or(s.xmit_ts, |t| t.max(s.xmit_ts)));
                if s.end < prior_highest_sacked {
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
        if !blocks.is_empty() {
            self.board.sack(blocks, |s| on_delivered(s, true));
        }
        if ack > prior_una {
            self.board.ack_cumulative(ack, |s| on_delivered(s, false));
            self.backoff = 0;
            self.last_progress = now;
            self.dupacks = 0;
        }
        if d.reordering {
            self.rack.on_reordering();
        }
        d
    }

    /// A plausible D-SACK arrived: RACK widens its reordering window (RFC 8985 §6.2).
    #[inline]
    pub fn on_dsack(&mut self, snd_una: u64, snd_max: u64) {
        self.rack.on_dsack(snd_una, snd_max);
    }

    /// Nothing outstanding, Open, no TLP episode and no D-SACK undo due: an ACK
    /// that advances nothing finds nothing to do here (`ack_changes_nothing`). The
    /// ACK path's methods take this as a fact (`quiet`) that answers their own
    /// checks of the same conditions, so its idle instance skips them (one body, the
    /// checks folded away, no twin).
    #[inline]
    pub fn quiet(&self) -> bool {
        self.board.is_empty()
            && self.ca_state == CaState::Open
            && self.tlp.high_seq.is_none()
            && !self.undo.all_retrans_dsacked()
    }

    /// Below CWR: a reduction may start (RDB's hidden loss enters CWR only from here).
    #[inline]
    pub fn below_cwr(&self) -> bool {
        self.ca_state < CaState::Cwr
    }

    /// The reduction this ACK starts, if any: recovery when segments are marked lost,
    /// CWR on ECE. `quiet`: nothing is outstanding, so nothing is lost.
    #[inline]
    pub fn entry_due(&self, quiet: bool, ece: bool) -> Option<Entry> {
        if !quiet && self.board.lost_out() > 0 && self.ca_state < CaState::Recovery {
            Some(Entry::Recovery)
        } else if ece && self.ca_state < CaState::Cwr {
            Some(Entry::Cwr)
        } else {
            None
        }
    }

    /// Open and Disorder follow what is SACKed; an old ACK never reopens (its SACK
    /// news can only add to what is SACKed). `quiet`: Open with nothing SACKed.
    #[inline]
    pub fn settle_disorder(&mut self, quiet: bool, current: bool) {
        if quiet {
            return;
        }
        if self.ca_state == CaState::Open && self.board.sacked_out() > 0 {
            self.ca_state = CaState::Disorder;
        } else if current && self.ca_state == CaState::Disorder && self.board.sacked_out() == 0 {
            self.ca_state = CaState::Open;
        }
    }

    /// Linux `tcp_enter_recovery`, loss recovery's half: a new undo episode, and the
    /// window (`cwnd`, `ssthresh`) saved for an undo unless ECE came with the loss.
    /// Returns whether the window must be cut (not when a CWR reduction is under way,
    /// which simply continues; then [`reduce_from`](Self::reduce_from) is not called).
    pub fn begin_recovery(&mut self, snd_una: u64, cwnd: u32, ssthresh: u32, ece: bool) -> bool {
        self.undo.forbid_restore();
        self.undo.start(snd_una, self.board.retrans_out());
        let cut = self.ca_state != CaState::Cwr;
        if cut {
            self.undo.set_prior_cwnd(cwnd);
            if !ece {
                let prior = current_ssthresh(cwnd, ssthresh, false);
                self.undo.save(cwnd, Some(prior));
            }
        }
        self.ca_state = CaState::Recovery;
        cut
    }

    /// Linux `tcp_enter_cwr`, loss recovery's half: never undone.
    pub fn begin_cwr(&mut self, cwnd: u32) {
        self.undo.forbid_restore();
        self.undo.cancel();
        self.undo.set_prior_cwnd(cwnd);
        self.ca_state = CaState::Cwr;
    }

    /// Congestion control cut ssthresh to `ssthresh`: PRR spreads the reduction over
    /// the next window, up to the recovery point `snd_nxt`.
    pub fn reduce_from(&mut self, ssthresh: u32, prior_in_flight: u32, snd_nxt: u64) {
        self.prr.enter(ssthresh, prior_in_flight.max(1));
        self.high_seq = snd_nxt;
    }

    /// RFC 8985 §7.4.2 (Linux `tcp_process_tlp_ack`): whether a loss the probe
    /// repaired reduces the window (not inside a reduction); the window it reduces is
    /// recorded (`tcp_init_cwnd_reduction`).
    pub fn begin_probe_reduction(&mut self, cwnd: u32) -> bool {
        if self.ca_state >= CaState::Cwr {
            return false;
        }
        self.undo.set_prior_cwnd(cwnd);
        true
    }

    /// Linux `tcp_enter_loss`, before congestion control responds: a timeout outside
    /// a recovery (or after its recovery point, or the first after an undone one)
    /// starts a new episode.
    pub fn loss_episode(&self, snd_una: u64) -> LossEpisode {
        LossEpisode {
            new_recovery: self.ca_state < CaState::Recovery,
            new_episode: self.ca_state <= CaState::Disorder
                || self.high_seq <= snd_una
                || (self.ca_state == CaState::Loss && self.backoff == 1),
            in_reduction: self.in_reduction(),
            leaves_recovery: self.ca_state == CaState::Recovery,
        }
    }

    /// Linux `tcp_enter_loss`, after congestion control responded: everything
    /// outstanding is lost (SACK marks too when the peer reneged), the window before
    /// it (`cwnd`, `ssthresh`) saved for an undo on a new episode, F-RTO (RFC 5682)
    /// armed unless a recovery was under way, except for repeated timeouts (§3.2).
    /// Returns the segments newly marked lost and whether the peer reneged.
    #[allow(clippy::too_many_arguments)]
    pub fn enter_loss(
        &mut self,
        e: LossEpisode,
        cwnd: u32,
        ssthresh: u32,
        snd_una: u64,
        snd_nxt: u64,
        frto: bool,
    ) -> (u32, bool) {
        let reneged = self.board.head_sacked();
        if reneged {
            // SACK reneging: the SACKed data must be sent again too.
            self.board.clear_sacked();
        }
        let lost = self.board.mark_all_lost();
        if e.new_episode {
            let ss = current_ssthresh(cwnd, ssthresh, e.in_reduction);
            self.undo.save(cwnd, Some(ss));
            self.undo.start(snd_una, self.board.retrans_out());
        }
        self.frto.on_rto(frto, e.new_recovery, self.backoff > 1);
        self.high_seq = snd_nxt;
        self.ca_state = CaState::Loss;
        self.tlp.reset();
        (lost, reneged)
    }

    /// RFC 8985 §7.4: whether this ACK ends a TLP episode by showing that the probe
    /// repaired a loss.
    /// `quiet`: no episode is open.
    #[inline]
    pub fn probe_repaired_loss(
        &mut self,
        quiet: bool,
        ack: u64,
        dsack: Option<(u64, u64)>,
        is_dupack: bool,
    ) -> bool {
        if quiet {
            return false;
        }
        let dsack_for_probe = match (dsack, self.tlp.high_seq) {
            (Some((_, r)), Some(h)) => r <= h,
            _ => false,
        };
        self.tlp.on_ack(ack, dsack_for_probe, is_dupack) == TlpOutcome::Loss
    }

    /// PRR's window for `delivered` segments while reducing (RFC 6937).
    #[inline]
    pub fn prr_cwnd(&mut self, delivered: u32) -> u32 {
        self.prr.on_ack(delivered, self.board.in_flight())
    }

    /// Phase 7's decision (Linux `tcp_set_xmit_timer`): the RTO plan, and whether the
    /// probe timer is scheduled again. `quiet`: nothing is outstanding.
    #[inline]
    pub fn rearm_plan(&self, quiet: bool, una_advanced: bool, delivered: bool) -> (RtoPlan, bool) {
        let reneged = una_advanced && self.board.head_sacked();
        let rto = if quiet || self.board.is_empty() {
            RtoPlan::Disarm
        } else if reneged {
            RtoPlan::Reneging
        } else if una_advanced {
            RtoPlan::Progress
        } else {
            RtoPlan::Keep
        };
        (rto, (una_advanced || delivered) && !reneged)
    }

    /// Whether the probe timer may run (RFC 8985 §7.2, Linux
    /// `tcp_schedule_loss_probe`): data outstanding, no episode open, not in
    /// Recovery or Loss.
    #[inline]
    pub fn may_schedule_probe(&self) -> bool {
        !self.board.is_empty() && self.tlp.high_seq.is_none() && self.ca_state <= CaState::Cwr
    }

    /// The probe timer fired: the probe is due if it still may run (the next
    /// `poll_transmit` sends it).
    pub fn probe_due(&mut self) -> bool {
        let due = self.may_schedule_probe();
        if due {
            self.tlp.pending = true;
        }
        due
    }

    /// A segment went out (new data or a retransmission) during a reduction: PRR
    /// counts it.
    #[inline]
    fn on_segment_sent(&mut self) {
        if self.in_reduction() {
            self.prr.on_sent(1);
        }
    }

    // ----- what the send path asks and tells -----

    /// Packets in flight (RFC 6675 `pipe`).
    #[inline]
    pub fn in_flight(&self) -> u32 {
        self.board.in_flight()
    }

    /// The highest SACKed sequence (0: none).
    #[inline]
    pub fn highest_sacked(&self) -> u64 {
        self.board.highest_sacked()
    }

    /// The scoreboard, lent read-only to a mechanism (RDB's hidden-loss check).
    #[inline]
    pub fn board(&self) -> &Scoreboard {
        &self.board
    }

    /// Packets sent and not yet cumulatively ACKed.
    #[inline]
    pub fn packets_out(&self) -> u32 {
        self.board.packets_out()
    }

    /// Data is outstanding.
    #[inline]
    pub fn outstanding(&self) -> bool {
        !self.board.is_empty()
    }

    /// The RTO fired with data outstanding: one more backoff step (RFC 6298 §5.5),
    /// or, at `max_retries` steps, `Err` with the steps taken (the connection gives
    /// up).
    pub fn back_off(&mut self, max_retries: u32) -> Result<u32, u32> {
        if self.backoff >= max_retries {
            return Err(self.backoff);
        }
        self.backoff += 1;
        Ok(self.backoff)
    }

    /// When a cumulative ACK last acknowledged data (for the user timeout).
    #[inline]
    pub fn last_progress(&self) -> Instant {
        self.last_progress
    }

    /// The last (re)transmission time of the earliest outstanding segment (RTO-restart's
    /// base, RFC 7765 §4).
    #[inline]
    pub fn earliest_xmit(&self) -> Option<Instant> {
        self.board.first().map(|s| s.xmit_ts)
    }

    /// The RTO without backoff (for the persist timer).
    #[inline]
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }

    /// Nothing marked lost waits for a retransmission.
    #[inline]
    pub fn no_lost_pending(&self) -> bool {
        self.board.no_lost_pending()
    }

    /// The lowest segment marked lost and not yet retransmitted (RFC 6675 §5 NextSeg
    /// rule 1).
    #[inline]
    pub fn next_lost(&mut self) -> Option<u64> {
        self.board.next_lost().map(|s| s.id)
    }

    /// A retransmission in Loss is the RTO's, otherwise a fast one.
    #[inline]
    pub fn retransmit_kind(&self) -> RetransmitKind {
        if self.ca_state == CaState::Loss {
            RetransmitKind::Rto
        } else {
            RetransmitKind::Fast
        }
    }

    /// In fast recovery (not CWR, not Loss).
    #[inline]
    pub fn in_fast_recovery(&self) -> bool {
        self.ca_state == CaState::Recovery
    }

    /// RFC 6675 §4 NextSeg rule 3: the first segment below the highest SACKed one
    /// that is neither SACKed, retransmitted nor marked lost. Bounded by the segments
    /// below the highest SACK; only in recovery, with RACK off (the legacy profile's
    /// other scans are as long).
    pub fn forward_retransmit_candidate(&self) -> Option<u64> {
        let high = self.board.highest_sacked();
        self.board
            .iter()
            .take_while(|s| s.end <= high)
            .find(|s| !s.sacked && !s.retrans && !s.lost)
            .map(|s| s.id)
    }

    /// The send record of outstanding segment `id`.
    #[inline]
    pub fn segment(&self, id: u64) -> SentSegment {
        // NOTE(unwrap): callers pass an id just read from the scoreboard.
        *self.board.get(id).unwrap()
    }

    /// Segment `id` was retransmitted (`tsval`: the timestamp it carries, Eifel's
    /// evidence).
    pub fn on_retransmitted(&mut self, id: u64, info: SentInfo, tsval: u32) {
        self.board.on_retransmit(id, info);
        self.undo.on_retransmit(tsval);
        self.on_segment_sent();
    }

    /// New sequence space `[start, end)` went out in a packet beginning at
    /// `tx_start` (below `start` when RDB bundled earlier bytes in front).
    pub fn on_new_segment(
        &mut self,
        start: u64,
        end: u64,
        fin: bool,
        info: SentInfo,
        tx_start: u64,
    ) {
        self.board.push(start, end, fin, info);
        if tx_start < start {
            self.board.set_last_tx_start(tx_start);
        }
        self.on_segment_sent();
    }

    /// What an RDB bundle may carry (`Mechanisms::segment_start`).
    #[inline]
    pub fn bundle_view(&self, mss: u32) -> BundleView<'_> {
        BundleView {
            board: &self.board,
            min_rtt: self.rtt.min_rtt(),
            mss,
        }
    }

    /// F-RTO step 2b (RFC 5682 §3.1): new data goes before retransmissions.
    #[inline]
    pub fn frto_new_data_first(&self) -> bool {
        self.frto.new_data_first()
    }

    /// F-RTO's new data could not go: whether to retransmit after all. Not once new
    /// data went beyond the recovery point (SND.NXT at `snd_nxt`); else F-RTO stops
    /// and recovery goes on as usual.
    pub fn frto_nothing_new(&mut self, snd_nxt: u64) -> bool {
        if snd_nxt > self.high_seq {
            return false;
        }
        self.frto.stop();
        true
    }

    /// `poll_transmit` takes the due probe.
    #[inline]
    pub fn probe_taken(&mut self) {
        self.tlp.pending = false;
    }

    /// A due probe waits for `poll_transmit`.
    #[inline]
    pub fn probe_pending(&self) -> bool {
        self.tlp.pending
    }

    /// The probe went out with SND.NXT at `snd_nxt`; `retransmitted`: old data.
    #[inline]
    pub fn on_probe_sent(&mut self, snd_nxt: u64, retransmitted: bool) {
        self.tlp.on_probe_sent(snd_nxt, retransmitted);
    }

    /// RFC 8985 §7.3: the highest outstanding segment, unless SACKed, for a probe
    /// that cannot send new data.
    #[inline]
    pub fn probe_retransmit(&self) -> Option<u64> {
        self.board.last().filter(|l| !l.sacked).map(|l| l.id)
    }
}
