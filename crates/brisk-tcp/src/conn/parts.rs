//! The subflow's state in parts with one job each (quinn's `PathData` is the
//! model): what the handshake negotiated, the send and receive sequence spaces, the
//! handshake's own progress, loss recovery, congestion control, probes and tracing.
//! The data level (buffers, FIN, writability, events) is `super::stream::Stream`.

use super::ack_policy::AckState;
use super::{CaState, Segment};
use crate::cc::{CcDiagnostics, CcNeeds, CcState, FlowCc};
use crate::event::TraceEvent;
use crate::recovery::frto::Frto;
use crate::recovery::rack::Rack;
use crate::recovery::scoreboard::Scoreboard;
use crate::recovery::tlp::Tlp;
use crate::recovery::undo::Undo;
use crate::recovery::{Prr, RttEstimator};
use brisk_time::Instant;
use std::collections::VecDeque;
use std::sync::Arc;

/// Options negotiated in the handshake (RFC 7323, RFC 2018, RFC 3168, MSS).
#[derive(Debug)]
pub(super) struct Negotiated {
    pub iss: u32,
    pub irs: u32,
    /// Payload bytes per full segment we send (peer MSS - option overhead).
    pub mss: u32,
    /// Payload bytes per full segment we expect (for delayed-ACK decisions).
    pub rcv_mss: u32,
    pub snd_wscale: u8,
    pub rcv_wscale: u8,
    pub ws_ok: bool,
    pub sack_ok: bool,
    pub ts_ok: bool,
    pub ecn_ok: bool,
    pub ts_offset: u32,
    pub ts_recent: u32,
    pub ts_recent_valid: bool,
    /// Option bytes kept free on every established segment beside timestamps (an
    /// MPTCP subflow's DSS, `mptcp::meta::DSS_RESERVE`; 0 for plain TCP): the MSS
    /// shrinks by it, as Linux's `tcp_current_mss` by `mptcp_established_options`.
    pub opt_reserve: u8,
}

impl Negotiated {
    pub fn new(iss: u32, mss: u32, rcv_wscale: u8, ts_offset: u32) -> Self {
        Negotiated {
            iss,
            irs: 0,
            mss,
            rcv_mss: mss,
            snd_wscale: 0,
            rcv_wscale,
            ws_ok: false,
            sack_ok: false,
            ts_ok: false,
            ecn_ok: false,
            ts_offset,
            ts_recent: 0,
            ts_recent_valid: false,
            opt_reserve: 0,
        }
    }
}

/// The send sequence space (offsets from the ISS) of one subflow: sequence numbers
/// only; the bytes are the stream's (`super::stream::Stream`).
#[derive(Debug)]
pub(super) struct SendSpace {
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_wnd: u64,
    pub max_snd_wnd: u64,
    /// Sequence number of the segment that last updated the window (SND.WL1); the
    /// window update rule is Linux's, which needs no SND.WL2.
    pub snd_wl1: i64,
    /// End of the last small segment sent (Minshall's Nagle variant).
    pub snd_sml: u64,
    /// Sequence number of our FIN once sent: the subflow's FIN. In plain TCP it
    /// follows the stream's last byte (`Stream::fin_queued`); under MPTCP the
    /// stream's end is a DATA_FIN and this FIN closes one subflow only.
    pub fin_seq: Option<u64>,
}

impl SendSpace {
    pub fn new() -> Self {
        SendSpace {
            snd_una: 0,
            snd_nxt: 0,
            snd_wnd: 0,
            max_snd_wnd: 0,
            snd_wl1: 0,
            snd_sml: 0,
            fin_seq: None,
        }
    }

    /// Whether our FIN is sent and acknowledged (SND.UNA passed it).
    #[inline]
    pub fn fin_acked(&self) -> bool {
        self.fin_seq.is_some_and(|fs| self.snd_una > fs)
    }
}

/// The handshake's progress (SYN / SYN-ACK retransmission and its RTT sample).
#[derive(Debug, Default)]
pub(super) struct Handshake {
    pub syn_pending: bool,
    pub syn_retries: u32,
    pub syn_sent_at: Option<Instant>,
    pub syn_retransmitted: bool,
}

/// The receive sequence space (offsets from the IRS; RFC 9293 §3.3.1's RCV.NXT and
/// RCV.WND, the IRS being `Negotiated::irs`) and the ACK policy; the reassembly
/// buffer is the stream's, reached through `super::stream_map::StreamMap`.
#[derive(Debug)]
pub(super) struct RecvSide {
    /// RCV.NXT: the next sequence offset expected. 1 from the start (the peer's SYN
    /// takes 0; before the handshake nothing reads it but the RST we may send); moved
    /// only by `advance` (in-order bytes arrived) and `on_fin` (the FIN arrived in
    /// order).
    pub rcv_nxt: u64,
    /// Sequence offset of the peer's FIN once seen, possibly ahead of a hole: the
    /// subflow's FIN (plain TCP: also the stream's end; MPTCP: not the DATA_FIN).
    pub fin_seq: Option<u64>,
    /// The peer's FIN arrived in order and RCV.NXT took it (`on_fin`).
    pub fin_received: bool,
    /// Right edge we advertised (RCV.NXT + RCV.WND), never moved left (RFC 7323 §2.4).
    pub rcv_adv: u64,
    pub last_ack_sent: u64,
    /// When to ACK (see `ack_policy`).
    pub ack: AckState,
    pub sack_scratch: Vec<(u64, u64)>,
    /// ACKs built when a segment arrived while an immediate ACK was still owed (the
    /// caller handed over several segments before polling); sent first, in order.
    pub owed_acks: VecDeque<Segment>,
    /// A CE mark arrived: echo ECE until the peer sends CWR (RFC 3168 §6.1.3); with
    /// DCTCP's accurate echo, the CE state of the latest data segment (RFC 8257 §3.2).
    pub ece_pending: bool,
}

impl RecvSide {
    pub fn new(quick_acks: u32) -> Self {
        RecvSide {
            rcv_nxt: 1,
            fin_seq: None,
            fin_received: false,
            rcv_adv: 0,
            last_ack_sent: 0,
            ack: AckState::new(quick_acks),
            // Empty until the first SACK block: in-order connections never need it.
            sack_scratch: Vec::new(),
            owed_acks: VecDeque::new(),
            ece_pending: false,
        }
    }

    /// `n` more bytes arrived in order: RCV.NXT moves over them.
    #[inline]
    pub fn advance(&mut self, n: u64) {
        self.rcv_nxt += n;
    }

    /// Whether the peer's FIN is the next thing expected and not yet taken (all data
    /// before it is in).
    #[inline]
    pub fn fin_due(&self) -> bool {
        !self.fin_received && self.fin_seq == Some(self.rcv_nxt)
    }

    /// The peer's FIN arrived in order: RCV.NXT moves over its sequence number.
    #[inline]
    pub fn on_fin(&mut self) {
        self.fin_received = true;
        self.rcv_nxt += 1;
    }

    /// The FIN seen but not yet in order, for SACK blocks (None once taken).
    #[inline]
    pub fn fin_ahead(&self) -> Option<u64> {
        self.fin_seq.filter(|_| !self.fin_received)
    }

    /// RCV.WND as the peer sees it: the advertised right edge less RCV.NXT.
    #[inline]
    pub fn rcv_wnd(&self) -> u64 {
        self.rcv_adv.saturating_sub(self.rcv_nxt)
    }
}

/// Loss detection and recovery state (RFC 6675 scoreboard, RFC 6298 RTO, RACK-TLP,
/// PRR, undo).
#[derive(Debug)]
pub(super) struct LossRecovery {
    pub board: Scoreboard,
    pub rtt: RttEstimator,
    pub rack: Rack,
    pub tlp: Tlp,
    pub prr: Prr,
    /// Saved window and evidence for undoing a spurious reduction.
    pub undo: Undo,
    pub frto: Frto,
    /// The recovery state machine's state (Linux `icsk_ca_state`, driven by
    /// `tcp_fastretrans_alert`): Open, Disorder, CWR, Recovery, Loss.
    pub ca_state: CaState,
    /// Recovery point (RFC 6582 `recover`, Linux `high_seq`).
    pub high_seq: u64,
    /// RTO backoff exponent.
    pub backoff: u32,
    pub dupacks: u32,
    /// Data ACK progress time, for the user timeout.
    pub last_progress: Instant,
}

impl LossRecovery {
    pub fn new(rtt: RttEstimator, now: Instant) -> Self {
        LossRecovery {
            board: Scoreboard::new(),
            rtt,
            rack: Rack::default(),
            tlp: Tlp::default(),
            prr: Prr::default(),
            undo: Undo::default(),
            frto: Frto::default(),
            ca_state: CaState::Open,
            high_seq: 0,
            backoff: 0,
            dupacks: 0,
            last_progress: now,
        }
    }
}

/// Congestion control: the controller, the variables it reads and writes, and
/// cwnd-limited tracking. (The CA state is loss recovery's.)
#[derive(Debug)]
pub(super) struct Congestion {
    /// The controller (base plus layers), with the flow's identity in its host.
    pub ctrl: FlowCc,
    /// The variables the controller sees (cwnd, ssthresh, ...).
    pub vars: CcState,
    /// The controller's label ("cubic+dc"), computed once.
    pub label: Arc<str>,
    pub max_packets_out: u32,
    /// When data was last sent (Linux `lsndtime`): idle periods are measured from it.
    pub last_data_sent: Option<Instant>,
    pub is_cwnd_limited: bool,
    pub round_end: u64,
    /// Set CWR on the next new data segment (RFC 3168 §6.1.2).
    pub cwr_pending: bool,
    /// What the controller needs beyond the plain contract (asked once).
    pub needs: CcNeeds,
    /// Pacing (`pacing.rs`): on when the controller asks for it or the
    /// configuration turns it on. Boxed: a connection without pacing keeps 8 bytes
    /// of it (the per-connection memory bound, `tests/conn_memory.rs`).
    pub pacer: Option<Box<super::pacing::Pacer>>,
}

impl Congestion {
    pub fn new(ctrl: FlowCc, vars: CcState, pacing: bool) -> Self {
        let label: Arc<str> = ctrl.label().into();
        let needs = ctrl.needs();
        let pacer = (pacing || needs.pacing).then(|| Box::new(super::pacing::Pacer::new()));
        Congestion {
            ctrl,
            vars,
            label,
            max_packets_out: 0,
            last_data_sent: None,
            is_cwnd_limited: false,
            round_end: 0,
            cwr_pending: false,
            needs,
            pacer,
        }
    }
}

/// Zero-window and keepalive probing, and liveness times.
#[derive(Debug)]
pub(super) struct Probes {
    pub probe_pending: bool,
    pub persist_backoff: u32,
    pub persist_probes: u32,
    pub keepalive_probes: u32,
    pub last_recv: Instant,
    pub last_send: Instant,
}

impl Probes {
    pub fn new(now: Instant) -> Self {
        Probes {
            probe_pending: false,
            persist_backoff: 0,
            persist_probes: 0,
            keepalive_probes: 0,
            last_recv: now,
            last_send: now,
        }
    }
}

/// The bounded trace and what was last traced (to trace changes only).
#[derive(Debug, Default)]
pub(super) struct Tracer {
    pub buf: Option<Vec<TraceEvent>>,
    pub dropped: u64,
    pub last_cwnd: (u32, u32),
    pub last_diag: Option<CcDiagnostics>,
}
