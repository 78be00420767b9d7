//! What a connection reports: `TcpInfo` and the bounded trace.

use super::*;

impl Connection {
    pub fn info(&self) -> TcpInfo {
        if let Some(m) = self.mp.as_deref() {
            // MPTCP: the first subflow's.
            return m.subs[0].conn.info();
        }
        // Every field spelled out (no `..Default`), so a new `TcpInfo` field must be
        // filled here.
        let c = &self.info;
        TcpInfo {
            state: self.state.name(),
            cc: self.sub.cong.label.clone(),
            cwnd: self.sub.cong.vars.cwnd,
            ssthresh: self.sub.cong.vars.ssthresh,
            mss: self.sub.opts.mss,
            srtt: self.sub.loss.rtt.srtt().unwrap_or_default(),
            rttvar: self.sub.loss.rtt.rttvar(),
            min_rtt: self.sub.loss.rtt.min_rtt().unwrap_or_default(),
            rto: self.current_rto(),
            in_flight: self.sub.loss.board.in_flight(),
            retransmits: c.retransmits,
            retransmitted_bytes: c.retransmitted_bytes,
            rdb_packets: c.rdb_packets,
            rdb_bytes: c.rdb_bytes,
            rdb_loss_cwr: c.rdb_loss_cwr,
            ecn_cwr: c.ecn_cwr,
            delay_cwr: c.delay_cwr,
            lost: c.lost,
            sacked: self.sub.loss.board.sacked_out(),
            delivered: self.sub.cong.vars.delivered,
            bytes_sent: c.bytes_sent,
            bytes_acked: c.bytes_acked,
            bytes_received: c.bytes_received,
            segs_out: c.segs_out,
            data_segs_out: c.data_segs_out,
            segs_in: c.segs_in,
            dsack_received: c.dsack_received,
            rto_count: c.rto_count,
            tlp_count: c.tlp_count,
            undo_count: c.undo_count,
            dsack_undo: c.dsack_undo,
            spurious_rto: c.spurious_rto,
            app_limited: self.sub.cong.vars.app_limited,
            snd_wnd: self.sub.snd.snd_wnd.min(u64::from(u32::MAX)) as u32,
            rcv_wnd: self
                .sub
                .rcv
                .rcv_adv
                .saturating_sub(self.rcv_nxt())
                .min(u64::from(u32::MAX)) as u32,
            cc_diag: self.sub.cong.ctrl.diagnostics(),
            rc3: self.mech.rc3_info(),
        }
    }

    /// Each subflow's `TcpInfo`, in the connection's order (the initial one first),
    /// for an MPTCP connection; empty for plain TCP. The compound window LISA's
    /// experiments plot is the sum of their `cwnd`s. Allocates: for reports and
    /// samples, not per packet.
    pub fn mptcp_subflow_infos(&self) -> Vec<TcpInfo> {
        self.mp
            .as_deref()
            .map_or_else(Vec::new, |m| m.subs.iter().map(|s| s.conn.info()).collect())
    }

    /// Turns recording of `TraceEvent`s on or off (bounded buffer, drained by `drain_trace`).
    pub fn set_trace(&mut self, on: bool) {
        if on {
            self.tracer.buf.get_or_insert_with(Vec::new);
        } else {
            self.tracer.buf = None;
        }
    }

    /// Whether `drain_trace` would move anything: an inline test, so a caller that
    /// drains after every poll (the simulator's hosts) skips the call and its loop
    /// when nothing was recorded.
    #[inline]
    pub fn has_trace(&self) -> bool {
        self.tracer.buf.as_ref().is_some_and(|b| !b.is_empty())
    }

    pub fn drain_trace(&mut self, out: &mut Vec<TraceEvent>) {
        if let Some(t) = self.tracer.buf.as_mut() {
            out.append(t);
        }
    }

    /// Trace events not recorded because the buffer was full.
    pub fn trace_dropped(&self) -> u64 {
        self.tracer.dropped
    }
}
