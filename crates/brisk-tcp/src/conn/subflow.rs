//! One subflow: the TCP machine of one 4-tuple below the data stream (RFC 8684 §2's
//! subflow; Linux's `mptcp_subflow_context` over a plain `tcp_sock` in
//! `net/mptcp/subflow.c`). It owns the options the handshake negotiated, a send
//! sequence space without bytes, the handshake's progress, the receive sequence
//! space with the ACK policy, loss recovery, congestion control, probes and its
//! timers. Today a [`Connection`](super::Connection) is one stream and one subflow.

use super::parts::{Congestion, Handshake, LossRecovery, Negotiated, Probes, RecvSide, SendSpace};
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
}
