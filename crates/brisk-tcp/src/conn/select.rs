//! Which bytes go next: new data within cwnd and the peer's window (RFC 5681, RFC
//! 896 Nagle with Minshall's refinement, sender SWS avoidance, zero-window persist),
//! the lowest lost segment (RFC 6675 §5 NextSeg rule 1; Linux
//! `tcp_xmit_retransmit_queue`), a forward retransmission in recovery without RACK
//! (NextSeg rule 3), and the TLP probe (RFC 8985 §7.3). RDB's bundles,
//! RC3's tail copies and prioritised order are further selections that go here.

use super::rto_timer::RtoArm;
use super::{Connection, Segment, SegmentKind, State};
use crate::cc::SentInfo;
use crate::conn::timer::Timer;
use crate::event::{RetransmitKind, TraceEvent};
use crate::recovery::rto;
use brisk_time::Instant;

/// The new segment `send_new_data` decided on: the stream offset of its first byte,
/// its length, whether the FIN goes with it, and packets in flight before it.
struct NewSegment {
    next: u64,
    len: u32,
    fin: bool,
    in_flight: u32,
}

impl Connection {
    fn sent_info(&mut self, now: Instant, bytes: u32, retransmit: bool) -> SentInfo {
        let in_flight = self.sub.loss.in_flight();
        let mut info = self.sub.cong.sent_info(now, bytes, retransmit, in_flight);
        if self.sub.cong.needs.rate_samples {
            let packets_out = self.sub.loss.packets_out();
            let lost = self.info.lost;
            self.sub
                .cong
                .rate_snapshot(now, packets_out, lost, &mut info);
        }
        info
    }

    /// Linux `tcp_pacing_check`: whether pacing holds the next data segment; if so,
    /// the pacing timer is armed for its departure time. One `None` test without
    /// pacing.
    #[inline]
    fn paced_out(&mut self, now: Instant) -> bool {
        let Some(at) = self.sub.cong.pacer.as_ref().and_then(|p| p.wait(now)) else {
            return false;
        };
        self.sub.timers.set(Timer::Pacing, at);
        true
    }

    /// Retransmits the lowest segment marked lost, if cwnd allows (RFC 6675 §5 NextSeg
    /// rule 1; Linux `tcp_xmit_retransmit_queue`).
    ///
    /// Inline for its common answer, nothing marked lost (about 640 000 polls of
    /// `bench sim`'s 2 s run ask); the rest out of line.
    #[inline]
    pub(super) fn send_retransmit(&mut self, now: Instant) -> Option<Segment> {
        if self.sub.loss.no_lost_pending() {
            return None;
        }
        self.send_retransmit_lost(now)
    }

    #[inline(never)]
    fn send_retransmit_lost(&mut self, now: Instant) -> Option<Segment> {
        let lost = self.sub.loss.next_lost()?;
        if self.sub.cong.blocks(self.sub.loss.in_flight()) || self.paced_out(now) {
            return None;
        }
        let rk = self.sub.loss.retransmit_kind();
        Some(self.retransmit(now, lost, rk))
    }

    /// RFC 6675 §4 NextSeg rule 3, as Linux 3.x ran it (`tcp_xmit_retransmit_queue`
    /// with `tcp_can_forward_retransmit`): in fast recovery, when nothing is marked
    /// lost and no new data can go, retransmit the first segment below the highest
    /// SACKed one that is neither SACKed nor retransmitted, if cwnd allows. Without it
    /// a partial ACK that leaves fewer than DupThresh SACKed segments above a hole
    /// (a whole flight lost, then a TLP probe SACKed) waits for the RTO. Linux dropped
    /// forward retransmission with FACK in 4.15, once RACK marked such holes by time,
    /// so it applies only with RACK off (`linux_profile = "3.17"`).
    ///
    /// The guard is inline (with RACK on it always returns `None`), the search out of
    /// line. `always`: a plain hint was not taken in `poll_transmit`.
    #[inline(always)]
    pub(super) fn send_forward_retransmit(&mut self, now: Instant) -> Option<Segment> {
        if self.forward_retransmit_ruled_out() {
            return None;
        }
        self.send_forward_retransmit_search(now)
    }

    /// The forward retransmission's guard: RACK on, not in fast recovery, no SACK,
    /// or cwnd full. Reads only (`poll_finds_nothing` asks it too).
    #[inline(always)]
    pub(super) fn forward_retransmit_ruled_out(&self) -> bool {
        self.config.recovery.rack
            || !self.sub.loss.in_fast_recovery()
            || !self.sub.opts.sack_ok
            || !self.sub.cong.has_room(self.sub.loss.in_flight())
    }

    #[inline(never)]
    fn send_forward_retransmit_search(&mut self, now: Instant) -> Option<Segment> {
        let id = self.sub.loss.forward_retransmit_candidate()?;
        Some(self.retransmit(now, id, RetransmitKind::Fast))
    }

    fn retransmit(&mut self, now: Instant, id: u64, rk: RetransmitKind) -> Segment {
        // NOTE(unwrap): callers pass an id just read from the scoreboard.
        let seg = self.sub.loss.segment(id);
        let len = seg.payload_len();
        let s = self.build_data_segment(now, seg.start, len, seg.fin, SegmentKind::Retransmit(rk));
        let info = self.sent_info(now, len, true);
        let tsval = self.tsval(now);
        self.sub.loss.on_retransmitted(id, info, tsval);
        self.sub.cong.on_sent(&info);
        self.info.retransmits += 1;
        self.info.retransmitted_bytes += u64::from(len);
        self.trace(TraceEvent::Retransmit {
            at: now,
            seq: seg.start,
            len,
            kind: rk,
        });
        if seg.start == self.sub.snd.snd_una && rk == RetransmitKind::Fast {
            self.arm_rto(now, RtoArm::HeadRetransmit);
        } else {
            self.arm_rto(now, RtoArm::DataSent);
        }
        s
    }

    /// Whether new data may still go: the FIN is not sent and the state sends data.
    /// CLOSING too: close() queues the FIN (FIN-WAIT-1) before it can go, and a peer FIN
    /// that arrives first moves us to CLOSING with data and our FIN still unsent.
    pub(super) fn data_state_open(&self) -> bool {
        self.sub.snd.fin_seq.is_none()
            && (matches!(
                self.state,
                State::Established
                    | State::CloseWait
                    | State::FinWait1
                    | State::Closing
                    | State::LastAck
            ) || self.tfo_passive_pending())
    }

    /// New data (and FIN) within cwnd and the peer's window. `probe` (a TLP) ignores
    /// cwnd and Nagle.
    pub(super) fn send_new_data(&mut self, now: Instant, probe: bool) -> Option<Segment> {
        let NewSegment {
            next,
            len,
            fin,
            in_flight,
        } = self.new_segment(now, probe)?;
        if !probe && self.paced_out(now) {
            return None;
        }
        if !self.sub.loss.outstanding() {
            self.on_tx_start(now);
        }
        let start = self.sub.snd.snd_nxt;
        let (loss, mss) = (&self.sub.loss, self.sub.opts.mss);
        let mut tx_start = self
            .mech
            .segment_start(start, len, fin, in_flight, || loss.bundle_view(mss));
        if tx_start < start {
            tx_start = self.bundle_start(next, start, tx_start);
        }
        let tx_len = len + (start - tx_start) as u32;
        let seq_len = u64::from(len) + u64::from(fin);
        let info = self.sent_info(now, len, false);
        self.sub
            .loss
            .on_new_segment(start, start + seq_len, fin, info, tx_start);
        if tx_start < start {
            self.info.rdb_packets += 1;
            self.info.rdb_bytes += start - tx_start;
        }
        self.sub.snd.snd_nxt += seq_len;
        if fin {
            self.sub.snd.fin_seq = Some(self.sub.snd.snd_nxt - 1);
        }
        self.stream.sendbuf.mark_sent(next + u64::from(len));
        if len < self.sub.opts.mss {
            self.sub.snd.snd_sml = self.sub.snd.snd_nxt;
        }
        let (packets_out, in_flight) = (self.sub.loss.packets_out(), self.sub.loss.in_flight());
        self.sub
            .cong
            .on_data_sent(now, &info, packets_out, in_flight);
        self.sub.timers.stop(Timer::Persist);
        self.arm_rto(now, RtoArm::DataSent);
        if !probe {
            self.schedule_tlp(now);
        }
        // Built last, so that it is built in the returned `Option` rather than copied
        // into it after the bookkeeping above (a copy of the `Segment` per data
        // segment). The same as building it first: the segment reads the send
        // buffer's end (`mark_sent` moves only the write records), ECN's
        // `cwr_pending`, the receive side (ACK, window, SACK, timestamps) and the
        // options, none of which the bookkeeping above writes; and what it writes
        // (`cwr_pending`, the receive side's last ACK and ACK state, the delayed-ACK
        // timer, the send counters and `last_send`) the bookkeeping neither reads nor
        // writes. Timer slots are independent and `TimerTable::next` is their minimum
        // whatever the order, so stopping the delayed ACK after arming the RTO and TLP
        // leaves the same table.
        Some(self.build_data_segment(now, tx_start, tx_len, fin, SegmentKind::NewData))
    }

    /// An RDB bundle's start: never back across a record end (`end_record`'s
    /// contract). On an MPTCP subflow a record end is where one DSS mapping stops and
    /// a non-contiguous one starts (`sub_dsn_break`): a bundle across it would carry
    /// bytes under the wrong DSN (tests/mptcp_compose.rs). Out of line: only RDB
    /// bundles.
    #[inline(never)]
    fn bundle_start(&self, next: u64, start: u64, tx_start: u64) -> u64 {
        let since = self.stream.bytes_since_record_end(next);
        tx_start.max(start.saturating_sub(since))
    }

    /// Zero window (or too small for one byte) with data to send: the persist timer
    /// (RFC 9293 §3.8.6.1), armed when nothing is outstanding to clock ACKs. Out of
    /// line: the peer's window is rarely closed.
    #[cold]
    #[inline(never)]
    fn arm_persist_if_idle(&mut self, now: Instant) {
        if !self.sub.loss.outstanding() && !self.sub.timers.is_set(Timer::Persist) {
            let t = rto::backoff(
                self.sub.loss.rto(),
                self.sub.probes.persist_backoff,
                self.config.recovery.max_rto,
            );
            self.sub.timers.set(Timer::Persist, now + t);
        }
    }

    /// Which new bytes go next, if any may go now (the decision of `send_new_data`):
    /// application-limited, cwnd-limited, the peer's window (zero: persist), a hole's
    /// or a record's end, Nagle and sender SWS avoidance.
    #[inline]
    fn new_segment(&mut self, now: Instant, probe: bool) -> Option<NewSegment> {
        if !self.data_state_open() {
            return None;
        }
        // RC3: skip what the RLP's copies delivered; a hole ends where the next
        // delivered range begins.
        let hole_end = self.skip_delivered();
        let (next, end) = self.unsent_range();
        let avail = end - next;
        if avail == 0 && !self.stream.fin_queued {
            // Out of data with room to send more: application-limited (RFC 7661).
            let in_flight = self.sub.loss.in_flight();
            if self.sub.cong.needs.rate_samples && self.sub.loss.no_lost_pending() {
                self.sub.cong.mark_rate_app_limited(in_flight);
            }
            self.sub.cong.note_app_limited(now, in_flight);
            return None;
        }
        let in_flight = self.sub.loss.in_flight();
        if !probe && self.sub.cong.blocks_new_data(in_flight) {
            return None;
        }
        let wnd_left =
            (self.sub.snd.snd_una + self.sub.snd.snd_wnd).saturating_sub(self.sub.snd.snd_nxt);
        let to_hole_end = hole_end.saturating_sub(self.sub.snd.snd_nxt);
        let hole_limited = to_hole_end < avail.min(u64::from(self.sub.opts.mss));
        // A record end (MSG_EOR) ahead cuts the segment there. Like a hole's end it is
        // not a small write: Linux applies Nagle only to the last skb of the queue.
        // Marks stay until acknowledged: a retransmission ending at one keeps its PSH.
        let acked = self.sub.map.snd_to_stream(self.sub.snd.snd_una);
        let to_record_end = self.stream.bytes_to_record_end(next, acked);
        let record_limited = to_record_end < avail.min(u64::from(self.sub.opts.mss));
        let len = avail
            .min(u64::from(self.sub.opts.mss))
            .min(wnd_left)
            .min(to_hole_end)
            .min(to_record_end) as u32;
        if len == 0 && avail > 0 {
            self.arm_persist_if_idle(now);
            return None;
        }
        let fin = self.stream.fin_queued && next + u64::from(len) == end;
        // A hole cut short by delivered data (RC3) is not a small write: no Nagle or SWS.
        if !probe
            && !hole_limited
            && !record_limited
            && u64::from(len) < u64::from(self.sub.opts.mss)
            && !fin
        {
            let window_limited = u64::from(len) < avail;
            // Nagle (RFC 896, Minshall): hold a small segment while an earlier small
            // one is unacknowledged.
            if self.config.nagle && !window_limited && self.sub.snd.snd_sml > self.sub.snd.snd_una {
                return None;
            }
            // Sender SWS avoidance (RFC 9293 §3.8.6.2.1): a window-limited small segment
            // waits unless it is at least half the largest window seen.
            if window_limited
                && self.sub.loss.outstanding()
                && u64::from(len) < self.sub.snd.max_snd_wnd / 2
            {
                return None;
            }
        }
        Some(NewSegment {
            next,
            len,
            fin,
            in_flight,
        })
    }

    /// The next new byte (a stream offset) and the end of the queued data.
    #[inline]
    fn unsent_range(&self) -> (u64, u64) {
        let next = self.sub.map.snd_to_stream(self.sub.snd.snd_nxt);
        (next, self.stream.sendbuf.end())
    }

    /// Whether `send_new_data(now, false)` would return `None` and write nothing, at
    /// any `now`: the state sends no data; or the sender is out of data with that
    /// already noted (`new_segment`'s first `None`, whose marks are then taken); or
    /// cwnd blocks it with the cwnd-limited mark already set (its second). Without
    /// RC3 only (the caller's condition): `skip_delivered` then writes nothing.
    /// `false` for every later reason (the peer's window, Nagle, SWS avoidance), so
    /// it never needs their side effects (the persist timer).
    pub(super) fn new_data_settled(&self) -> bool {
        if !self.data_state_open() {
            return true;
        }
        let (next, end) = self.unsent_range();
        let in_flight = self.sub.loss.in_flight();
        if next == end && !self.stream.fin_queued {
            let rate_mark = self.sub.loss.no_lost_pending();
            return self.sub.cong.app_limited_settled(in_flight, rate_mark);
        }
        self.sub.cong.new_data_blocked_settled(in_flight)
    }

    /// Before the primary loop sends new data: the mechanisms may move SND.NXT over
    /// data they delivered (RC3, spec A5); returns where the next such range begins,
    /// which bounds the next segment (u64::MAX: no bound).
    fn skip_delivered(&mut self) -> u64 {
        let data_end = self.sub.map.stream_to_snd(self.stream.sendbuf.end());
        let next = self.mech.before_new_data(self.sub.snd.snd_nxt, data_end);
        if next.snd_nxt > self.sub.snd.snd_nxt {
            self.sub.snd.snd_nxt = next.snd_nxt;
            self.stream
                .sendbuf
                .mark_sent(self.sub.map.snd_to_stream(next.snd_nxt));
        }
        next.bound
    }

    /// RFC 8985 §7.3: new data if the window allows, else the highest segment again.
    pub(super) fn send_tlp_probe(&mut self, now: Instant) -> Option<Segment> {
        self.sub.loss.probe_taken();
        let s = match self.send_new_data(now, true) {
            Some(s) => {
                self.sub.loss.on_probe_sent(self.sub.snd.snd_nxt, false);
                s
            }
            None => {
                let last = self.sub.loss.probe_retransmit()?;
                let s = self.retransmit(now, last, RetransmitKind::Tlp);
                self.sub.loss.on_probe_sent(self.sub.snd.snd_nxt, true);
                s
            }
        };
        self.info.tlp_count += 1;
        self.arm_rto(now, RtoArm::Probe);
        Some(s)
    }
}
