//! The three-way handshake (RFC 9293 §3.5, §3.10.7.3): the SYN / SYN-ACK we send,
//! the options we negotiate from the peer's SYN (RFC 7323, RFC 2018, RFC 3168, MSS),
//! a SYN-ACK arriving in SYN-SENT (including simultaneous open), and the move to
//! ESTABLISHED. Linux: `tcp_connect`, `tcp_make_synack`, `tcp_rcv_synsent_state_process`,
//! `tcp_finish_connect`. Fast Open (RFC 7413): the SYN's option and data and the
//! SYN-ACK's handling are in `fastopen.rs`, called from here.

use super::rto_timer::RtoArm;
use super::{Connection, Segment, SegmentKind, State};
use crate::conn::timer::Timer;
use crate::event::{ConnError, Event};
use brisk_time::Instant;
use brisk_wire::{Flags, SeqNum, TcpRepr, Timestamps, WindowScale};

impl Connection {
    pub(super) fn syn_segment(&mut self, now: Instant) -> Segment {
        self.sub.hs.syn_pending = false;
        let active = self.state == State::SynSent;
        let mut flags = Flags::SYN;
        if !active {
            flags.insert(Flags::ACK);
        }
        if active && self.config.ecn.enabled {
            flags.insert(Flags::ECE);
            flags.insert(Flags::CWR);
        } else if !active && self.sub.opts.ecn_ok {
            flags.insert(Flags::ECE);
        }
        let window = self.stream.recvbuf.free().min(65_535) as u16;
        let (ws, sack, ts) = if active {
            (
                self.config.options.window_scaling,
                self.config.options.sack,
                self.config.options.timestamps,
            )
        } else {
            (
                self.sub.opts.ws_ok,
                self.sub.opts.sack_ok,
                self.sub.opts.ts_ok,
            )
        };
        let tsecr = if active { 0 } else { self.sub.opts.ts_recent };
        let mut header = TcpRepr {
            seq: self.wire_snd(0),
            // RCV.NXT: past the SYN, and past its data if Fast Open accepted it.
            ack: if active {
                SeqNum(0)
            } else {
                self.wire_rcv(self.rcv_nxt())
            },
            flags,
            window,
            mss: Some(self.config.mss),
            window_scale: ws.then_some(WindowScale::clamped(self.sub.opts.rcv_wscale)),
            sack_permitted: sack,
            timestamps: ts.then(|| Timestamps {
                tsval: self.tsval(now),
                tsecr,
            }),
            ..self.bare_header()
        };
        let data = if self.tfo.is_some() {
            let first = self.sub.hs.syn_sent_at.is_none();
            self.tfo_syn(&mut header, first, active)
        } else {
            0
        };
        let mut s = self.segment(header, SegmentKind::Control);
        s.payload_len = data;
        self.sub.snd.snd_nxt = self.sub.snd.snd_nxt.max(1 + u64::from(data));
        if self.sub.hs.syn_sent_at.is_none() {
            self.sub.hs.syn_sent_at = Some(now);
        }
        if !active {
            self.sub.rcv.rcv_adv = self.rcv_nxt() + u64::from(window);
            self.sub.rcv.last_ack_sent = self.rcv_nxt();
        }
        self.arm_rto(now, RtoArm::Handshake);
        self.record_tx(now, &s);
        s
    }

    /// Options from the peer's SYN (or SYN-ACK): RFC 7323, RFC 2018, RFC 3168, MSS.
    pub(super) fn negotiate(&mut self, syn: &TcpRepr<'_>, passive: bool) {
        let peer_mss = u32::from(syn.mss.unwrap_or(536)).max(64);
        let ws_ok = self.config.options.window_scaling && syn.window_scale.is_some();
        self.sub.opts.ws_ok = ws_ok;
        self.sub.opts.snd_wscale = if ws_ok {
            syn.window_scale.map_or(0, WindowScale::get)
        } else {
            0
        };
        if !ws_ok {
            self.sub.opts.rcv_wscale = 0;
        }
        self.sub.opts.sack_ok = self.config.options.sack && syn.sack_permitted;
        self.sub.opts.ts_ok = self.config.options.timestamps && syn.timestamps.is_some();
        if let Some(ts) = syn.timestamps.filter(|_| self.sub.opts.ts_ok) {
            self.sub.opts.ts_recent = ts.tsval;
            self.sub.opts.ts_recent_valid = true;
        }
        let ece = syn.flags.contains(Flags::ECE);
        let cwr = syn.flags.contains(Flags::CWR);
        self.sub.opts.ecn_ok =
            self.config.ecn.enabled && if passive { ece && cwr } else { ece && !cwr };
        let opt = (if self.sub.opts.ts_ok { 12 } else { 0 }) + u32::from(self.sub.opts.opt_reserve);
        self.sub.opts.mss = peer_mss
            .min(u32::from(self.config.mss))
            .saturating_sub(opt)
            .max(48);
        self.sub.opts.rcv_mss = u32::from(self.config.mss).saturating_sub(opt).max(48);
        self.sub.cong.vars.mss = self.sub.opts.mss;
        // The SYN's window is never scaled (RFC 7323 §2.2).
        self.sub.snd.snd_wnd = u64::from(syn.window);
        self.sub.snd.max_snd_wnd = self.sub.snd.snd_wnd;
    }

    /// RFC 9293 §3.10.7.3.
    pub(super) fn on_segment_syn_sent(&mut self, now: Instant, seg: &TcpRepr<'_>) {
        let f = seg.flags;
        // Inner Space: the answer to a SYN-U is read first (`inspace.rs`); a legacy
        // server's SYN/ACK resets the connection, a SYN/ACK-U goes on as ordinary.
        if self.inspace.is_some()
            && f.syn()
            && f.ack()
            && !f.rst()
            && self.inspace_role() == Some(super::inspace::InSpaceRole::Upgraded)
            && self.inspace_outcome().is_none()
        {
            if let Some(s) = self.inspace_synack(seg) {
                self.on_segment_syn_sent(now, &s);
            }
            return;
        }
        let mut acked = 0;
        if f.ack() {
            let ack = self.unwrap_ack(seg.ack);
            acked = ack;
            if ack <= 0 || ack > self.sub.snd.snd_nxt as i64 {
                if !f.rst() {
                    self.pending_rst = Some((seg.ack, None));
                }
                self.counters.bad_acks += 1;
                return;
            }
        }
        if f.rst() {
            // RFC 5961 §3.2: only an RST acknowledging our SYN is believed.
            if f.ack() {
                self.terminate(Err(ConnError::Refused));
            }
            return;
        }
        if !f.syn() {
            return;
        }
        self.sub.opts.irs = seg.seq.0;
        self.negotiate(seg, false);
        self.sub.probes.last_recv = now;
        if f.ack() {
            self.sub.snd.snd_una = 1;
            self.sub.snd.snd_wl1 = 0;
            if self.tfo.is_some() {
                self.tfo_on_synack(seg, acked as u64);
            }
            if !self.sub.hs.syn_retransmitted {
                if let Some(t) = self.sub.hs.syn_sent_at {
                    self.rtt_sample(now, now - t);
                }
            }
            self.established(now);
            self.push_event(Event::Connected);
            // RFC 7413 §4.2.2: a SYN-ACK MAY carry data and FIN; on a Fast Open
            // connection Linux queues them (`tcp_rcv_fastopen_synack` →
            // `tcp_fastopen_add_skb`, since 4.6).
            if self.tfo.is_some() && self.used_fastopen() && (!seg.payload.is_empty() || f.fin()) {
                self.tfo_synack_data(now, seg);
            }
            // ACK the SYN-ACK at once (Linux does, unless it can piggyback on data);
            // an Inner Space Ordinary connection waits for its dual's decision.
            if self.inspace.is_none() || !self.inspace_holds_ack() {
                self.ack_now();
            }
        } else {
            // Simultaneous open (RFC 9293 §3.5, figure 8): SYN-ACK with our ISS again.
            self.state = State::SynReceived;
            self.sub.hs.syn_pending = true;
        }
    }

    /// Handshake complete: start CC, keepalive and the established-state bookkeeping.
    pub(super) fn established(&mut self, now: Instant) {
        self.state = if self.stream.fin_queued {
            State::FinWait1
        } else {
            State::Established
        };
        self.sub.hs.syn_pending = false;
        self.sub.timers.stop(Timer::Rto);
        self.sub.loss.backoff = 0;
        self.sub.hs.syn_retries = 0;
        self.set_cwnd(self.config.congestion.initial_cwnd.max(1));
        self.sub.cong.ctrl.init(&mut self.sub.cong.vars, now);
        if self.sub.cong.pacer.is_some() {
            self.sub.cong.update_pacing(0);
        }
        self.trace_cwnd(now);
        self.sub.loss.last_progress = now;
        self.sub.cong.round_end = self.sub.snd.snd_nxt;
        if let Some(idle) = self.config.timeouts.keepalive {
            self.sub.timers.set(Timer::Keepalive, now + idle);
        }
        if self.tfo.is_some() {
            self.tfo_established(now);
        }
    }

    /// The listener this passive connection waits on was closed (Linux
    /// `inet_csk_listen_stop`): an accept-queue child is reset, a SYN-queue one
    /// dropped without a segment.
    pub(crate) fn listener_closed(&mut self, queued: bool) {
        if queued {
            self.abort();
        } else {
            self.terminate(Err(ConnError::Aborted));
        }
    }
}
