//! What to send next and how a segment is built (RFC 9293 §3.8.6, RFC 5681/6675
//! transmission rules, RFC 896 Nagle with Minshall's refinement as Linux does).
//!
//! Order per call: pending RST; SYN / SYN-ACK; probe (zero-window or keepalive); TLP
//! probe; retransmission of the lowest lost segment; new data (and FIN); a pure ACK.
//! Each `poll_transmit` returns at most one segment.

use super::rto_timer::RtoArm;
use super::{CaState, Connection, Segment, SegmentKind, State};
use crate::cc::{CcEvent, SentInfo};
use crate::conn::timer::Timer;
use crate::event::{RetransmitKind, TraceEvent};
use crate::recovery::rto;
use brisk_time::Instant;
use brisk_wire::{Ecn, Flags, SackBlock, SackBlocks, SeqNum, Timestamps};

impl Connection {
    /// The next segment to send, if any.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        if let Some((seq, ack)) = self.pending_rst.take() {
            return Some(self.rst_segment(now, seq, ack));
        }
        if let Some(s) = self.rcv.owed_acks.pop_front() {
            return Some(s);
        }
        match self.state {
            State::Closed | State::Listen => return None,
            State::SynSent => {
                return if self.hs.syn_pending {
                    Some(self.syn_segment(now))
                } else {
                    None
                };
            }
            State::SynReceived => {
                if self.hs.syn_pending {
                    return Some(self.syn_segment(now));
                }
                if self.rcv.ack.immediate {
                    let s = self.header(now, self.snd.snd_nxt, Flags::ACK, SegmentKind::Ack);
                    return Some(self.finish(now, s));
                }
                return None;
            }
            _ => {}
        }
        if self.probes.probe_pending {
            self.probes.probe_pending = false;
            let seq = self.snd.snd_una.saturating_sub(1);
            let mut s = self.header(now, seq, Flags::ACK, SegmentKind::Probe);
            s.payload_len = 0;
            return Some(self.finish(now, s));
        }
        if self.loss.tlp.pending {
            if let Some(s) = self.send_tlp_probe(now) {
                return Some(s);
            }
        }
        // F-RTO step 2b (RFC 5682 §3.1; Linux `tcp_xmit_recovery` with REXMIT_NEW):
        // new data instead of retransmissions; if none can go, recover as usual.
        let mut retransmit = true;
        if self.loss.frto.new_data_first() {
            if let Some(s) = self.send_new_data(now, false) {
                return Some(s);
            }
            if self.snd.snd_nxt > self.loss.high_seq {
                retransmit = false;
            } else {
                self.loss.frto.stop();
            }
        }
        if retransmit {
            if let Some(s) = self.send_retransmit(now) {
                return Some(s);
            }
        }
        if let Some(s) = self.send_new_data(now, false) {
            return Some(s);
        }
        if self.ack_due() {
            let s = self.header(now, self.snd.snd_nxt, Flags::ACK, SegmentKind::Ack);
            return Some(self.finish(now, s));
        }
        None
    }

    /// The payload bytes of a segment returned by `poll_transmit`.
    pub fn payload(&self, seg: &Segment) -> &[u8] {
        if seg.payload_len == 0 {
            return &[];
        }
        self.snd
            .sendbuf
            .slice(seg.payload_offset, seg.payload_len as usize)
    }

    fn rst_segment(&mut self, now: Instant, seq: SeqNum, ack: Option<SeqNum>) -> Segment {
        let mut flags = Flags::RST;
        if ack.is_some() {
            flags.insert(Flags::ACK);
        }
        let s = Segment {
            src_port: self.local.port(),
            dst_port: self.remote.port(),
            seq,
            ack: ack.unwrap_or(SeqNum(0)),
            flags,
            window: 0,
            mss: None,
            window_scale: None,
            sack_permitted: false,
            sack: SackBlocks::new(),
            timestamps: None,
            payload_offset: 0,
            payload_len: 0,
            ecn: Ecn::NotEct,
            dscp: self.config.dscp,
            priority: 0,
            kind: SegmentKind::Control,
        };
        self.record_tx(now, &s);
        s
    }

    fn syn_segment(&mut self, now: Instant) -> Segment {
        self.hs.syn_pending = false;
        let active = self.state == State::SynSent;
        let mut flags = Flags::SYN;
        if !active {
            flags.insert(Flags::ACK);
        }
        if active && self.config.ecn {
            flags.insert(Flags::ECE);
            flags.insert(Flags::CWR);
        } else if !active && self.opts.ecn_ok {
            flags.insert(Flags::ECE);
        }
        let window = self.rcv.recvbuf.free().min(65_535) as u16;
        let (ws, sack, ts) = if active {
            (
                self.config.window_scaling,
                self.config.sack,
                self.config.timestamps,
            )
        } else {
            (self.opts.ws_ok, self.opts.sack_ok, self.opts.ts_ok)
        };
        let tsecr = if active { 0 } else { self.opts.ts_recent };
        let s = Segment {
            src_port: self.local.port(),
            dst_port: self.remote.port(),
            seq: self.wire_snd(0),
            ack: if active { SeqNum(0) } else { self.wire_rcv(1) },
            flags,
            window,
            mss: Some(self.config.mss),
            window_scale: ws.then_some(self.opts.rcv_wscale),
            sack_permitted: sack,
            sack: SackBlocks::new(),
            timestamps: ts.then(|| Timestamps {
                tsval: self.tsval(now),
                tsecr,
            }),
            payload_offset: 0,
            payload_len: 0,
            ecn: Ecn::NotEct,
            dscp: self.config.dscp,
            priority: 0,
            kind: SegmentKind::Control,
        };
        self.snd.snd_nxt = self.snd.snd_nxt.max(1);
        if self.hs.syn_sent_at.is_none() {
            self.hs.syn_sent_at = Some(now);
        }
        if !active {
            self.rcv.rcv_adv = self.rcv_nxt() + u64::from(window);
            self.rcv.last_ack_sent = self.rcv_nxt();
        }
        self.arm_rto(now, RtoArm::Handshake);
        self.record_tx(now, &s);
        s
    }

    /// A segment header at `seq` carrying the current ACK, window, timestamps, SACK
    /// blocks and ECE; sending it satisfies any pending ACK.
    pub(super) fn header(
        &mut self,
        now: Instant,
        seq: u64,
        mut flags: Flags,
        kind: SegmentKind,
    ) -> Segment {
        let rcv_nxt = self.rcv_nxt();
        let window = self.advertise_window();
        if self.rcv.ece_pending {
            flags.insert(Flags::ECE);
        }
        let mut sack = SackBlocks::new();
        if self.opts.sack_ok {
            let max = if self.opts.ts_ok { 3 } else { 4 };
            let mut v = std::mem::take(&mut self.rcv.sack_scratch);
            self.rcv.recvbuf.sack_blocks(max, &mut v);
            for &(l, r) in &v {
                sack.push(SackBlock {
                    left: self.wire_rcv(l + 1),
                    right: self.wire_rcv(r + 1),
                });
            }
            self.rcv.sack_scratch = v;
        } else {
            // Without SACK a D-SACK cannot be sent; forget it so it forces no ACKs.
            self.rcv.recvbuf.clear_dsack();
        }
        Segment {
            src_port: self.local.port(),
            dst_port: self.remote.port(),
            seq: self.wire_snd(seq),
            ack: self.wire_rcv(rcv_nxt),
            flags,
            window,
            mss: None,
            window_scale: None,
            sack_permitted: false,
            sack,
            timestamps: self.opts.ts_ok.then(|| Timestamps {
                tsval: self.tsval(now),
                tsecr: self.opts.ts_recent,
            }),
            payload_offset: 0,
            payload_len: 0,
            ecn: Ecn::NotEct,
            dscp: self.config.dscp,
            priority: 0,
            kind,
        }
    }

    /// Bookkeeping common to every ACK-bearing segment.
    pub(super) fn finish(&mut self, now: Instant, s: Segment) -> Segment {
        self.rcv.last_ack_sent = self.rcv_nxt();
        self.rcv.ack.on_ack_sent();
        self.timers.stop(Timer::DelayedAck);
        self.record_tx(now, &s);
        s
    }

    /// Builds a data segment over `[start, start + len)` of sequence space (plus FIN).
    /// Taking an explicit range is what lets RDB bundle old bytes later.
    fn build_data_segment(
        &mut self,
        now: Instant,
        start: u64,
        len: u32,
        fin: bool,
        kind: SegmentKind,
    ) -> Segment {
        let mut flags = Flags::ACK;
        if fin {
            flags.insert(Flags::FIN);
        }
        let data_end = start + u64::from(len);
        if len > 0 && data_end - 1 == self.snd.sendbuf.end() {
            flags.insert(Flags::PSH);
        }
        let mut ecn = Ecn::NotEct;
        if self.opts.ecn_ok && len > 0 && kind == SegmentKind::NewData {
            // RFC 3168 §6.1.5: ECT on new data only, never on retransmissions.
            ecn = Ecn::Ect0;
            if self.cong.cwr_pending {
                flags.insert(Flags::CWR);
                self.cong.cwr_pending = false;
            }
        }
        let mut s = self.header(now, start, flags, kind);
        s.payload_offset = start.saturating_sub(1);
        s.payload_len = len;
        s.ecn = ecn;
        self.finish(now, s)
    }

    fn sent_info(&self, now: Instant, bytes: u32, retransmit: bool) -> SentInfo {
        SentInfo {
            sent_at: now,
            bytes,
            in_flight_at_send: self.loss.board.in_flight() + 1,
            delivered_at_send: self.cong.vars.delivered,
            app_limited: self.cong.vars.app_limited,
            retransmit,
        }
    }

    /// Retransmits the lowest segment marked lost, if cwnd allows (RFC 6675 §5 NextSeg
    /// rule 1; Linux `tcp_xmit_retransmit_queue`).
    fn send_retransmit(&mut self, now: Instant) -> Option<Segment> {
        let lost = self.loss.board.next_lost()?;
        if self.loss.board.in_flight() >= self.cong.vars.cwnd {
            self.cong.is_cwnd_limited = true;
            return None;
        }
        let rk = if self.cong.ca_state == CaState::Loss {
            RetransmitKind::Rto
        } else {
            RetransmitKind::Fast
        };
        Some(self.retransmit(now, lost.id, rk))
    }

    fn retransmit(&mut self, now: Instant, id: u64, rk: RetransmitKind) -> Segment {
        // NOTE(unwrap): callers pass an id just read from the scoreboard.
        let seg = *self.loss.board.get(id).unwrap();
        let len = seg.payload_len();
        let s = self.build_data_segment(now, seg.start, len, seg.fin, SegmentKind::Retransmit(rk));
        let info = self.sent_info(now, len, true);
        self.loss.board.on_retransmit(id, info);
        self.loss.undo.on_retransmit(self.tsval(now));
        self.cong.ctrl.on_sent(&mut self.cong.vars, &info);
        if self.in_reduction() {
            self.loss.prr.on_sent(1);
        }
        self.info.retransmits += 1;
        self.info.retransmitted_bytes += u64::from(len);
        self.trace(TraceEvent::Retransmit {
            at: now,
            seq: seg.start,
            len,
            kind: rk,
        });
        if seg.start == self.snd.snd_una && rk == RetransmitKind::Fast {
            self.arm_rto(now, RtoArm::HeadRetransmit);
        } else {
            self.arm_rto(now, RtoArm::DataSent);
        }
        s
    }

    /// New data (and FIN) within cwnd and the peer's window. `probe` (a TLP) ignores
    /// cwnd and Nagle.
    fn send_new_data(&mut self, now: Instant, probe: bool) -> Option<Segment> {
        if self.snd.fin_seq.is_some()
            || !matches!(
                self.state,
                State::Established | State::CloseWait | State::FinWait1 | State::LastAck
            )
        {
            return None;
        }
        let next = self.snd.snd_nxt - 1; // stream offset of the next new byte
        let end = self.snd.sendbuf.end();
        let avail = end - next;
        if avail == 0 && !self.snd.fin_queued {
            // Out of data with room to send more: application-limited (RFC 7661).
            if self.loss.board.in_flight() < self.cong.vars.cwnd && !self.cong.vars.app_limited {
                self.cong.vars.app_limited = true;
                self.cong
                    .ctrl
                    .on_event(&mut self.cong.vars, now, CcEvent::AppLimited);
            }
            return None;
        }
        let in_flight = self.loss.board.in_flight();
        if !probe && in_flight >= self.cong.vars.cwnd {
            self.cong.is_cwnd_limited = true;
            self.cong.vars.app_limited = false;
            return None;
        }
        let wnd_left = (self.snd.snd_una + self.snd.snd_wnd).saturating_sub(self.snd.snd_nxt);
        let len = avail.min(u64::from(self.opts.mss)).min(wnd_left) as u32;
        if len == 0 && avail > 0 {
            // Zero window (or too small for one byte): persist (RFC 9293 §3.8.6.1).
            if self.loss.board.is_empty() && !self.timers.is_set(Timer::Persist) {
                let t = rto::backoff(
                    self.loss.rtt.rto(),
                    self.probes.persist_backoff,
                    self.config.max_rto,
                );
                self.timers.set(Timer::Persist, now + t);
            }
            return None;
        }
        let fin = self.snd.fin_queued && next + u64::from(len) == end;
        if !probe && u64::from(len) < u64::from(self.opts.mss) && !fin {
            let window_limited = u64::from(len) < avail;
            // Nagle (RFC 896, Minshall): hold a small segment while an earlier small
            // one is unacknowledged.
            if self.config.nagle && !window_limited && self.snd.snd_sml > self.snd.snd_una {
                return None;
            }
            // Sender SWS avoidance (RFC 9293 §3.8.6.2.1): a window-limited small segment
            // waits unless it is at least half the largest window seen.
            if window_limited
                && !self.loss.board.is_empty()
                && u64::from(len) < self.snd.max_snd_wnd / 2
            {
                return None;
            }
        }
        if self.loss.board.is_empty() {
            self.on_tx_start(now);
        }
        let start = self.snd.snd_nxt;
        let s = self.build_data_segment(now, start, len, fin, SegmentKind::NewData);
        let seq_len = u64::from(len) + u64::from(fin);
        let info = self.sent_info(now, len, false);
        self.loss.board.push(start, start + seq_len, fin, info);
        self.snd.snd_nxt += seq_len;
        if fin {
            self.snd.fin_seq = Some(self.snd.snd_nxt - 1);
        }
        self.snd.sendbuf.mark_sent(next + u64::from(len));
        if len < self.opts.mss {
            self.snd.snd_sml = self.snd.snd_nxt;
        }
        self.cong.max_packets_out = self.cong.max_packets_out.max(self.loss.board.packets_out());
        self.cong.last_data_sent = Some(now);
        self.cong.ctrl.on_sent(&mut self.cong.vars, &info);
        if self.in_reduction() {
            self.loss.prr.on_sent(1);
        }
        self.timers.stop(Timer::Persist);
        self.arm_rto(now, RtoArm::DataSent);
        if !probe {
            self.schedule_tlp(now);
        }
        Some(s)
    }

    /// RFC 8985 §7.3: new data if the window allows, else the highest segment again.
    fn send_tlp_probe(&mut self, now: Instant) -> Option<Segment> {
        self.loss.tlp.pending = false;
        let s = match self.send_new_data(now, true) {
            Some(s) => {
                self.loss.tlp.on_probe_sent(self.snd.snd_nxt, false);
                s
            }
            None => {
                let last = self.loss.board.last().copied().filter(|l| !l.sacked)?;
                let s = self.retransmit(now, last.id, RetransmitKind::Tlp);
                self.loss.tlp.on_probe_sent(self.snd.snd_nxt, true);
                s
            }
        };
        self.info.tlp_count += 1;
        self.arm_rto(now, RtoArm::Probe);
        Some(s)
    }
}
