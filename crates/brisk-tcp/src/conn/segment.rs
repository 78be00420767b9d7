//! The one segment builder (RFC 9293 §3.1 header fields, RFC 7323 timestamps, RFC
//! 2018 SACK blocks, RFC 3168 ECT/ECE/CWR): every outgoing segment starts as
//! [`Connection::bare_header`] and becomes a [`Segment`] through
//! [`Connection::segment`]; ACK-bearing ones take the current ACK, window,
//! timestamps and SACK blocks from [`Connection::header`] and are finished by
//! [`Connection::finish`]. Linux's counterpart is `__tcp_transmit_skb`.

use super::{Connection, Segment, SegmentKind, TxMeta};
use crate::conn::timer::Timer;
use brisk_time::Instant;
use brisk_wire::Timestamps;
use brisk_wire::{Ecn, Flags, SackBlock, SackBlocks, SeqNum, TcpRepr};

impl Connection {
    /// A header with this connection's ports and nothing else set.
    pub(super) fn bare_header(&self) -> TcpRepr<'static> {
        TcpRepr {
            src_port: self.sub.local.port(),
            dst_port: self.sub.remote.port(),
            ..TcpRepr::default()
        }
    }

    /// `header` as a segment of `kind` without payload, not ECN-capable, at the
    /// configured DSCP and normal priority.
    pub(super) fn segment(&self, header: TcpRepr<'static>, kind: SegmentKind) -> Segment {
        Segment {
            header,
            payload_offset: 0,
            payload_len: 0,
            meta: TxMeta {
                ecn: Ecn::NotEct,
                dscp: self.config.dscp,
                priority: 0,
                kind,
                subflow: 0,
            },
        }
    }

    pub(super) fn rst_segment(
        &mut self,
        now: Instant,
        seq: SeqNum,
        ack: Option<SeqNum>,
    ) -> Segment {
        let mut flags = Flags::RST;
        if ack.is_some() {
            flags.insert(Flags::ACK);
        }
        let header = TcpRepr {
            seq,
            ack: ack.unwrap_or(SeqNum(0)),
            flags,
            ..self.bare_header()
        };
        let s = self.segment(header, SegmentKind::Control);
        self.record_tx(now, &s);
        s
    }

    /// A segment header at `seq` carrying the current ACK, window, timestamps, SACK
    /// blocks and ECE; sending it satisfies any pending ACK.
    pub(super) fn header(
        &mut self,
        now: Instant,
        seq: u64,
        flags: Flags,
        kind: SegmentKind,
    ) -> Segment {
        self.header_with(now, seq, flags, kind, 0, 0, Ecn::NotEct)
    }

    /// `header` with the payload range and ECN codepoint already in place, so that
    /// `build_data_segment` builds its segment in one piece: setting them after the
    /// call, and passing the segment through `finish` by value, cost two copies of
    /// the ~200-byte `Segment` on every data segment.
    #[allow(clippy::too_many_arguments)]
    fn header_with(
        &mut self,
        now: Instant,
        seq: u64,
        mut flags: Flags,
        kind: SegmentKind,
        payload_offset: u64,
        payload_len: u32,
        ecn: Ecn,
    ) -> Segment {
        let rcv_nxt = self.rcv_nxt();
        let window = self.advertise_window();
        if self.sub.rcv.ece_pending {
            flags.insert(Flags::ECE);
        }
        let mut sack = SackBlocks::new();
        // Skipping `sack_blocks` when it has nothing to say (every segment of a
        // receiver without holes) is exact: it would return no block and change nothing.
        if self.sub.opts.sack_ok && !self.stream.recvbuf.sack_blocks_idle() {
            sack = self.sack_option();
        } else if !self.sub.opts.sack_ok {
            // Without SACK a D-SACK cannot be sent; forget it so it forces no ACKs.
            self.stream.recvbuf.clear_dsack();
        }
        let header = TcpRepr {
            seq: self.wire_snd(seq),
            ack: self.wire_rcv(rcv_nxt),
            flags,
            window,
            sack,
            timestamps: self.sub.opts.ts_ok.then(|| Timestamps {
                tsval: self.tsval(now),
                tsecr: self.sub.opts.ts_recent,
            }),
            ..self.bare_header()
        };
        Segment {
            header,
            payload_offset,
            payload_len,
            meta: TxMeta {
                ecn,
                dscp: self.config.dscp,
                priority: 0,
                kind,
                subflow: 0,
            },
        }
    }

    /// The SACK blocks of the next ACK (RFC 2018 §4, D-SACK first per RFC 2883), on
    /// the wire. Only while the receive side has holes or a D-SACK to report, so out
    /// of line: the header of a clean transfer's segment stays small.
    #[inline(never)]
    fn sack_option(&mut self) -> SackBlocks {
        let mut sack = SackBlocks::new();
        let max = if self.sub.opts.ts_ok { 3 } else { 4 };
        let mut v = std::mem::take(&mut self.sub.rcv.sack_scratch);
        self.stream.recvbuf.sack_blocks(max, &mut v);
        // An out-of-order FIN is SACKed with its data, as Linux does (its `end_seq`
        // includes the FIN): otherwise a sender whose segment carried the FIN never
        // sees that segment SACKed, and RACK cannot use it.
        let fin = self.sub.rcv.fin_ahead();
        let map = self.sub.map;
        for &(l, r) in &v {
            let (l, r) = (map.stream_to_rcv(l), map.stream_to_rcv(r));
            let r = if Some(r) == fin { r + 1 } else { r };
            sack.push(SackBlock {
                left: self.wire_rcv(l),
                right: self.wire_rcv(r),
            });
        }
        self.sub.rcv.sack_scratch = v;
        sack
    }

    /// Bookkeeping common to every ACK-bearing segment.
    pub(super) fn finish(&mut self, now: Instant, s: Segment) -> Segment {
        self.finish_sent(now, s.payload_len);
        s
    }

    /// `finish` for a segment of `payload_len` bytes, without taking the segment:
    /// what `finish` does, in the same order (`record_tx` reads only the length).
    pub(super) fn finish_sent(&mut self, now: Instant, payload_len: u32) {
        self.sub.rcv.last_ack_sent = self.rcv_nxt();
        self.sub.rcv.ack.on_ack_sent();
        self.sub.timers.stop(Timer::DelayedAck);
        self.record_tx_len(now, payload_len);
    }

    /// Builds a data segment over `[start, start + len)` of sequence space (plus FIN).
    /// Taking an explicit range is what lets RDB bundle old bytes later.
    pub(super) fn build_data_segment(
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
        // The stream bytes this segment carries: [payload_offset, data_end).
        let payload_offset = self.sub.map.snd_to_stream(start);
        let data_end = self.sub.map.snd_to_stream(start + u64::from(len));
        // PSH at the end of the queued data, and at a record's end (Linux marks the
        // tail skb of each send, `tcp_mark_push`; an `eor` skb keeps it).
        if len > 0
            && (data_end == self.stream.sendbuf.end()
                || (!self.stream.record_ends.is_empty()
                    && self.stream.record_ends.binary_search(&data_end).is_ok()))
        {
            flags.insert(Flags::PSH);
        }
        let mut ecn = Ecn::NotEct;
        if self.sub.opts.ecn_ok && len > 0 && kind == SegmentKind::NewData {
            // RFC 3168 §6.1.5: ECT on new data only, never on retransmissions.
            ecn = Ecn::Ect0;
            if self.sub.cong.cwr_pending {
                flags.insert(Flags::CWR);
                self.sub.cong.cwr_pending = false;
            }
        }
        let s = self.header_with(now, start, flags, kind, payload_offset, len, ecn);
        self.finish_sent(now, len);
        s
    }

    pub(super) fn record_tx(&mut self, now: Instant, seg: &Segment) {
        self.record_tx_len(now, seg.payload_len);
    }

    fn record_tx_len(&mut self, now: Instant, payload_len: u32) {
        self.info.segs_out += 1;
        self.sub.probes.last_send = now;
        if payload_len > 0 {
            self.info.bytes_sent += u64::from(payload_len);
            self.info.data_segs_out += 1;
        }
    }
}
