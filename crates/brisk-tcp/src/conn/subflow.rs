//! One subflow: the TCP machine of one 4-tuple below the data stream (RFC 8684 §2's
//! subflow; Linux's `mptcp_subflow_context` over a plain `tcp_sock` in
//! `net/mptcp/subflow.c`). It owns the options the handshake negotiated, a send
//! sequence space without bytes, the handshake's progress, the receive sequence
//! space with the ACK policy, loss recovery, congestion control, probes and its
//! timers. Today a [`Connection`](super::Connection) is one stream and one subflow.
//!
//! Its sequence state is its own (RFC 9293 §3.3.1): SND.UNA/NXT/WND/WL1 and our
//! FIN's number in `snd`, RCV.NXT, the advertised edge and the peer's FIN's number
//! in `rcv`, ISS and IRS in `opts`. Stream offsets and sequence offsets meet only
//! in `map` ([`StreamMap`]), the place RFC 8684's data sequence mapping takes.

use super::parts::{Congestion, Handshake, LossRecovery, Negotiated, Probes, RecvSide, SendSpace};
use super::stream_map::StreamMap;
use super::timer::TimerTable;
use std::net::SocketAddr;

#[derive(Debug)]
pub(super) struct Subflow {
    pub local: SocketAddr,
    pub remote: SocketAddr,
    pub opts: Negotiated,
    pub snd: SendSpace,
    pub hs: Handshake,
    pub rcv: RecvSide,
    pub loss: LossRecovery,
    pub cong: Congestion,
    pub probes: Probes,
    pub timers: TimerTable,
    /// Sequence offsets ↔ stream offsets (plain TCP: shifted by the SYN).
    pub map: StreamMap,
}

impl Subflow {
    /// The stream offset up to which a cumulative ACK of send-sequence offset `ack`
    /// has delivered stream bytes: our FIN's sequence number carries none. (Under
    /// MPTCP a subflow's ACK frees nothing in the stream; the Data ACK does.)
    #[inline]
    pub fn stream_acked(&self, ack: u64) -> u64 {
        let fin_end = self.snd.fin_seq.unwrap_or(u64::MAX);
        self.map.snd_to_stream(ack.min(fin_end))
    }
}
