//! The MPTCP-level socket's state (Linux's `mptcp_sock`, `net/mptcp/protocol.c`):
//! keys, tokens and IDSNs (RFC 8684 §3.1), the data-level send buffer (bytes kept
//! until DATA-ACKed, §3.3.2), the data-level receive buffer ([`DataRecv`]), and the
//! subflows, each a complete plain-TCP [`Connection`] with its data-sequence maps.
//! A [`Connection`] whose `mp` is `Some` delegates its application and I/O calls
//! here (`conn/mp.rs` is the glue); its own stream and subflow stay dormant.

use super::dsn::{MapCounters, RecvMap, SendMap};
use super::join::{JoinInitiator, JoinResponder};
use super::pm::PathManager;
use super::recv::DataRecv;
use super::reinject::{DataRtxTimer, Reinjector};
use super::sched::Scheduler;
use crate::config::Config;
use crate::conn::send::{SendBuffer, MAX_SHARED_SLICE};
use crate::conn::Connection;
use brisk_time::Instant;
use brisk_wire::mptcp::{MptcpOption, ResetReason};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;

/// Most mappings a subflow's send side holds (each coalesces up to 64 KiB while the
/// data level continues on that subflow, so one subflow's 64 MiB).
pub const SEND_MAPS: usize = 1024;
/// Most mappings a subflow's receive side holds for bytes not yet consumed (a
/// per-segment mapping for each out-of-order segment the subflow holds).
pub const RECV_MAPS: usize = 4096;
/// Option space a subflow keeps free for the DSS on every established segment: data
/// ACK (8), DSN (8), subflow sequence (4), length (2), checksum (2) and the 4-byte
/// header, 28 aligned (Linux `mptcp_established_options_dss`, counted by
/// `tcp_current_mss`).
pub const DSS_RESERVE: u8 = 28;

/// Why a connection that offered MPTCP runs as plain TCP (RFC 8684 §3.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// The SYN-ACK had no MP_CAPABLE (a peer without MPTCP, or a middlebox stripped it).
    NoMpCapableSynAck,
    /// The ACK completing a passive handshake had no MP_CAPABLE (or the wrong key).
    NoMpCapableAck,
    /// Before the connection was fully established, the peer sent data or
    /// acknowledged ours without a DSS option.
    NoDss,
}

/// Per-connection MPTCP counters (Linux's `MPTcpExt*` MIBs where one matches).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MptcpCounters {
    /// Verdicts on received mappings (`dsn::MapVerdict`).
    pub map: MapCounters,
    /// Segments whose DSS checksum failed (Linux `DataCsumErr`): dropped, the subflow reset.
    pub csum_bad: u64,
    /// Mappings spanning several segments, whose checksum is not verified (not built).
    pub csum_unverified: u64,
    /// Mappings refused (outside the window, inconsistent, not covering the
    /// segment, table full; Linux `DSSNoMatchTCP`, `DSSTCPMismatch`, `NoDSSInWindow`):
    /// the subflow is reset, as Linux's `subflow_check_data_avail` does.
    pub map_refused: u64,
    /// Infinite mappings received after the handshake (fallback then is not built:
    /// the subflow is reset).
    pub infinite_rx: u64,
    /// Data without a mapping after data reached the data level (fallback is no
    /// longer possible): the subflow is reset (Linux `MPTCP_RST_EMPTCP`).
    pub no_dss_reset: u64,
    /// MPTCP options that failed to parse (ignored).
    pub bad_options: u64,
    /// Options that did not fit the segment (left out).
    pub opt_no_room: u64,
    /// Data ACKs outside what was sent (ignored).
    pub bad_data_acks: u64,
    /// MP_FASTCLOSE received with our key (the connection is reset).
    pub fastclose_rx: u64,
    /// Bytes a subflow delivered in order that no mapping covered (held on the subflow).
    pub unmapped_held: u64,
    /// Subflows opened with MP_JOIN (SYN sent) [MPJoinSynTx].
    pub join_syn_tx: u64,
    /// Join SYN/ACKs whose HMAC verified, third ACK sent [MPJoinSynAckRx].
    pub join_synack_rx: u64,
    /// Join SYN/ACKs refused (bad HMAC, no MP_JOIN) [MPJoinSynAckHMacFailure].
    pub join_synack_bad: u64,
    /// Join SYNs accepted (a subflow in SYN-RECEIVED) [MPJoinSynRx].
    pub join_syn_rx: u64,
    /// Third ACKs that verified: the passive subflow is established [MPJoinAckRx].
    pub join_ack_rx: u64,
    /// Third ACKs refused (bad HMAC, no MP_JOIN) [MPJoinAckHMacFailure].
    pub join_ack_bad: u64,
    /// Subflows other than the first that were reset or closed.
    pub subflows_closed: u64,
    /// RTOs of a subflow that queued its data for re-injection on another.
    pub reinject_rto: u64,
    /// Bytes re-injected on another subflow.
    pub reinjected_bytes: u64,
    /// Re-injections a subflow took only in part (the rest stayed queued).
    pub reinject_partial: u64,
    /// Expiries of the data-level retransmission timer that re-sent data
    /// (Linux `__mptcp_retrans`).
    pub data_rtx: u64,
    /// Bytes the data-level timer re-sent [MPTcpExtMPTCPRetrans counts segments].
    pub data_rtx_bytes: u64,
    /// Bytes sent as extra copies by the redundant scheduler (beyond the first).
    pub redundant_bytes: u64,
    /// Control options (ADD_ADDR, its echo, REMOVE_ADDR) dropped because the queue
    /// of options waiting for a pure ACK was full ([`SIGNAL_QUEUE`]).
    pub signals_dropped: u64,
    /// Subflows found stale (Linux `stale_loss_cnt` RTOs in a row without progress):
    /// left out of scheduling until they make progress again [MPTcpExtSubflowStale].
    pub subflows_stale: u64,
    /// The first subflow closed while another carried the connection on (RFC 8684
    /// §3.3: the connection lives while any subflow lives).
    pub first_subflow_lost: u64,
}

/// Control options (ADD_ADDR, echo, REMOVE_ADDR) waiting for a pure ACK to ride on:
/// a path manager's announcements for its 8 endpoints plus their echoes and removals.
pub const SIGNAL_QUEUE: usize = 24;
/// Consecutive RTOs after which a subflow is stale and not scheduled (Linux
/// `net.mptcp.stale_loss_cnt`, default 4; `mptcp_pm_subflows_chk_stale`).
pub const STALE_LOSS_CNT: u32 = 4;

/// The data-level send buffer: bytes from the application, kept until the Data ACK
/// covers them. Offsets count from the first byte (DSN = local IDSN + 1 + offset).
#[derive(Debug)]
pub struct DataSend {
    /// The bytes, by reference when the application writes them so
    /// (`Connection::write_shared`): then the subflows take them by reference too
    /// (`DataSend::write_to`), and no byte is copied on the way to the wire.
    pub buf: SendBuffer,
    /// Offset of `buf`'s first byte (the Data ACK's offset).
    pub una: u64,
    /// Offset of the first byte no subflow has taken yet.
    pub nxt: u64,
    /// One past the highest byte any subflow was given, runs sent ahead of `nxt`
    /// included (STTF): a Data ACK may cover bytes up to here, even after the run
    /// that carried them left STTF's book.
    pub hi: u64,
    pub limit: usize,
    /// The application closed: a DATA_FIN follows the last byte.
    pub fin_queued: bool,
    /// The peer's Data ACK covered the DATA_FIN.
    pub fin_acked: bool,
    /// A write was cut short: report `Writable` when the Data ACK frees room.
    pub writable_wanted: bool,
    /// When to request an ACK again to resend an unacknowledged DATA_FIN.
    pub fin_rtx_at: Option<Instant>,
    pub fin_rtx_count: u32,
    /// Right edge of the peer's data-level window (offset), the highest Data ACK plus
    /// window seen on one segment (Linux `msk->wnd_end`, raised in `ack_update_msk`,
    /// never lowered); `None` before the first Data ACK.
    pub wnd_end: Option<u64>,
}

impl DataSend {
    pub fn new(limit: usize) -> DataSend {
        DataSend {
            buf: SendBuffer::new(limit),
            una: 0,
            nxt: 0,
            hi: 0,
            limit,
            fin_queued: false,
            fin_acked: false,
            writable_wanted: false,
            fin_rtx_at: None,
            fin_rtx_count: 0,
            wnd_end: None,
        }
    }

    pub fn end(&self) -> u64 {
        self.una + self.buf.len() as u64
    }

    pub fn capacity(&self) -> usize {
        self.limit.saturating_sub(self.buf.len())
    }

    /// Bytes from offset `from` on, as one slice: all of them, or at least
    /// [`MAX_SHARED_SLICE`] (more than a mapping's [`super::dsn::MAX_MAP_LEN`]) when
    /// held by reference. Empty at or past the end.
    pub fn from(&self, from: u64) -> &[u8] {
        self.buf.contiguous(from)
    }

    /// How many bytes [`DataSend::write_to`] may take from offset `from` at once:
    /// [`DataSend::from`]'s length, also for bytes held by reference to a generated
    /// sequence, which are never produced at the data level (the subflow takes them
    /// by reference and produces each segment's payload when it sends it).
    pub fn avail(&self, from: u64) -> usize {
        self.buf.contiguous_len(from)
    }

    /// Writes `len` bytes from offset `from` (at most [`DataSend::avail`])
    /// into subflow `conn`'s send buffer; returns how many it took. By reference when
    /// the data level holds them so, as Linux's subflows send the MPTCP socket's own
    /// skbs (`mptcp_sendmsg_frag`); `Connection::write_shared` is `write` byte for
    /// byte and event for event, so the subflow sends the same either way.
    pub fn write_to(&self, conn: &mut Connection, from: u64, len: usize) -> usize {
        // Never past the data level's last byte (a table runs on beyond it).
        let len = len.min(self.avail(from));
        if len == 0 {
            return 0;
        }
        if let Some((src, pos)) = self.buf.shared_at(from) {
            return conn.write_shared_runs(src, pos, len.min(MAX_SHARED_SLICE));
        }
        conn.write(&self.from(from)[..len])
    }
}

/// How a subflow was made (RFC 8684 §3.1 / §3.2).
#[derive(Clone, Copy, Debug)]
pub enum SubJoin {
    /// The initial subflow (MP_CAPABLE).
    Initial,
    /// We opened it with MP_JOIN.
    Initiator(JoinInitiator),
    /// The peer joined it.
    Responder(JoinResponder),
}

/// One subflow: a complete plain-TCP connection and its data-sequence maps.
pub struct SubflowCtx {
    pub conn: Connection,
    pub join: SubJoin,
    /// Our address id for this subflow's local end (0 = the initial address).
    pub addr_id: u8,
    /// A backup subflow for the scheduler: ours or the peer's request
    /// (`local_backup || peer_backup`, Linux `subflow->backup || request_bkup`).
    pub backup: bool,
    /// We asked for backup (our endpoint's flag on the MP_JOIN, or our MP_PRIO).
    pub local_backup: bool,
    /// The peer asked for backup (its MP_JOIN B flag, or its MP_PRIO).
    pub peer_backup: bool,
    /// An MP_PRIO to send on this subflow's next pure ACK (our new backup flag).
    pub prio_tx: Option<bool>,
    /// The peer's address id of this subflow's remote end (0 = its initial address;
    /// a join's from the peer's MP_JOIN), for REMOVE_ADDR.
    pub remote_id: u8,
    /// The path manager's slot (`PathManager::on_subflow_closed` frees it).
    pub pm_slot: Option<usize>,
    /// May carry data: the initial subflow once MPTCP, a joined one once its
    /// handshake completed (the initiator: the peer acknowledged the third ACK, the
    /// "fourth ACK" of RFC 8684 §3.2; the responder: the third ACK verified).
    pub usable: bool,
    /// The third ACK's MP_JOIN, sent until the fourth ACK arrives.
    pub join_ack: Option<MptcpOption>,
    /// When to send the third ACK again if no fourth ACK came.
    pub join_rtx_at: Option<Instant>,
    pub join_rtx_count: u32,
    /// MP_TCPRST reason for this subflow's RST (a refused join, a bad mapping).
    pub rst_reason: Option<ResetReason>,
    /// The subflow's RTO count last seen (an increase means an RTO: re-inject).
    pub rto_seen: u64,
    /// Closed and polled empty (its last segment is out): it may be removed.
    pub closed_seen: bool,
    /// The DSN right after the last byte written to this subflow: a write at another
    /// DSN ends a record first, so that no segment spans two mappings.
    pub dsn_end: Option<u64>,
    pub smap: SendMap,
    pub rmap: RecvMap,
    /// The redundant scheduler's cursor: data-level offset of the next byte this
    /// subflow sends a copy of.
    pub red_nxt: u64,
    /// Subflow offset of the next byte the subflow's stream takes (its write end).
    pub written: u64,
    /// Subflow offset of the first byte not yet read from the subflow (bytes no
    /// mapping covers yet stay on the subflow).
    pub consumed: u64,
    /// Its slow-start exit (`super::ss_exit`, LISA's R_ss and cwnd samples).
    pub ss: super::ss_exit::SsTrack,
}

impl SubflowCtx {
    pub fn new(conn: Connection, join: SubJoin, addr_id: u8, backup: bool) -> SubflowCtx {
        SubflowCtx {
            conn,
            join,
            addr_id,
            backup,
            local_backup: backup,
            peer_backup: false,
            prio_tx: None,
            remote_id: 0,
            pm_slot: None,
            usable: matches!(join, SubJoin::Initial),
            join_ack: None,
            join_rtx_at: None,
            join_rtx_count: 0,
            rst_reason: None,
            rto_seen: 0,
            closed_seen: false,
            dsn_end: None,
            smap: SendMap::new(0, SEND_MAPS),
            rmap: RecvMap::new(RECV_MAPS),
            red_nxt: 0,
            written: 0,
            consumed: 0,
            ss: Default::default(),
        }
    }
}

/// A subflow taken out of a connection: the endpoint removes its 4-tuple from its
/// table and its flow from the host's congestion state.
#[derive(Clone, Copy, Debug)]
pub struct RemovedSubflow {
    pub key: (u16, SocketAddr),
    pub flow: Option<crate::cc::host::FlowId>,
}

/// The MPTCP-level socket.
pub struct Meta {
    pub passive: bool,
    pub local_key: u64,
    pub remote_key: Option<u64>,
    pub local_token: u32,
    pub local_idsn: u64,
    pub remote_idsn: u64,
    /// DSS checksums in use (either side asked, RFC 8684 §3.1).
    pub csum: bool,
    /// Client: the server has sent a DSS (RFC 8684 §3.1's "fully established");
    /// server: the keys arrived.
    pub fully_established: bool,
    pub snd: DataSend,
    /// Made once the peer's key is known.
    pub recv: Option<DataRecv>,
    pub rcv_cfg: super::recv::RecvConfig,
    pub subs: Vec<SubflowCtx>,
    pub counters: MptcpCounters,
    /// The peer's DATA_FIN reached the application's stream (PeerClosed sent).
    pub peer_closed_reported: bool,
    /// Send MP_FASTCLOSE on the subflows' RSTs (the application aborted).
    pub fastclose: bool,
    /// The subflows were told to close (after our DATA_FIN was acknowledged).
    pub subflows_closing: bool,
    pub orphaned: bool,
    /// Bytes the application has read (the next read's data-level offset).
    pub read_total: u64,
    /// Scratch for subflow bytes that wrap around the subflow's receive ring on their
    /// way to the data level (allocated on first use, `DRAIN_CHUNK` bytes).
    pub scratch: Vec<u8>,
    /// The path manager: which subflows to open (client) and the join limit (both).
    pub pm: PathManager,
    /// Which subflow takes the next data (`MptcpConfig::scheduler`).
    pub sched: Scheduler,
    /// Data of subflows that timed out, to send again on another (seed Table I).
    pub reinject: Reinjector,
    /// The data-level retransmission timer (Linux `mptcp_retransmit_timer`).
    pub rtx: DataRtxTimer,
    /// Nonces and other draws for joins (seeded from the connection's seed).
    pub rng: ChaCha8Rng,
    /// The subflows' config (the connection's without `mptcp`).
    pub sub_config: Arc<Config>,
    /// Remote address of the segment being handled (set by the endpoint): with the
    /// segment's destination port it names the subflow.
    pub rx_remote: Option<SocketAddr>,
    /// The path manager was told the connection is established.
    pub pm_started: bool,
    /// Subflows the endpoint should open (it picks the port and the 4-tuple).
    pub opens: VecDeque<SubflowOpen>,
    /// 4-tuples (local port, remote) of removed subflows, for the endpoint to take
    /// out of its table.
    pub removed: Vec<RemovedSubflow>,
    /// How the first subflow closed, while others still close.
    pub closed0: Option<Result<(), crate::event::ConnError>>,
    /// The first subflow is gone and the others carry the connection: its data was
    /// handed over and its path-manager slot freed (once).
    pub first_gone: bool,
    /// Linux-named MIB counters for the control options (ADD_ADDR, echo,
    /// REMOVE_ADDR, MP_PRIO), as `control.rs` counts them.
    pub mib: super::counters::MptcpCounters,
    /// Checks and rate-bounds the peer's ADD_ADDRs (made once the keys are known).
    pub gate: Option<super::control::AddAddrGate>,
    /// Control options waiting for a pure ACK (at most [`SIGNAL_QUEUE`]).
    pub signals: VecDeque<MptcpOption>,
    /// The compound values when the last subflow left slow start (`super::ss_exit`).
    pub ss_sum: Option<super::ss_exit::SsExitSum>,
    /// The connection's `Closed` event, held back while a subflow still has its last
    /// segment (a RST, with MP_FASTCLOSE after `abort`) to send: the endpoint reaps a
    /// connection as soon as the application sees `Closed`, and the RSTs of the
    /// subflows not yet polled went with it (`Connection::mp_hold_closed`).
    pub held_closed: Option<Result<(), crate::event::ConnError>>,
}

/// A subflow to open, asked of the endpoint (`Connection::mp_poll_open`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubflowOpen {
    /// The path manager's slot.
    pub slot: usize,
    /// The peer's address id of `remote` (0: its initial address).
    pub remote_id: u8,
    /// Local address (port 0: the endpoint picks an ephemeral one).
    pub local: SocketAddr,
    pub remote: SocketAddr,
    pub addr_id: u8,
    pub backup: bool,
}

impl Meta {
    /// The DSN of data-level send offset `off`.
    pub fn snd_dsn(&self, off: u64) -> u64 {
        self.local_idsn.wrapping_add(1).wrapping_add(off)
    }

    /// The DATA_FIN's DSN, once the application closed.
    pub fn fin_dsn(&self) -> Option<u64> {
        self.snd.fin_queued.then(|| self.snd_dsn(self.snd.end()))
    }
}
