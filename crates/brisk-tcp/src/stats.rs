//! Counters: per connection (like Linux `TCP_INFO`) and per endpoint (drops by reason).

use crate::cc::CcDiagnostics;
use brisk_time::Duration;

/// A snapshot like Linux's `struct tcp_info`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct TcpInfo {
    pub state: &'static str,
    pub cc: std::sync::Arc<str>,
    /// Segments.
    pub cwnd: u32,
    /// Segments (`u32::MAX` while infinite).
    pub ssthresh: u32,
    pub mss: u32,
    pub srtt: Duration,
    pub rttvar: Duration,
    pub min_rtt: Duration,
    pub rto: Duration,
    pub in_flight: u32,
    pub retransmits: u64,
    pub retransmitted_bytes: u64,
    /// Packets that carried an RDB bundle, and the redundant (bundled) bytes in them.
    pub rdb_packets: u64,
    pub rdb_bytes: u64,
    /// CWR reductions entered because an ACK revealed a loss a bundle hid.
    pub rdb_loss_cwr: u64,
    /// CWR reductions entered on ECE (RFC 3168 §6.1.2; at most one per window).
    pub ecn_cwr: u64,
    /// CWR reductions the controller asked for (CDG's delay-gradient backoffs).
    pub delay_cwr: u64,
    pub lost: u64,
    pub sacked: u32,
    pub delivered: u64,
    pub bytes_sent: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u64,
    /// Segments sent with payload, retransmissions included (Linux
    /// `tcpi_data_segs_out`).
    pub data_segs_out: u64,
    pub segs_in: u64,
    pub dsack_received: u64,
    pub rto_count: u64,
    pub tlp_count: u64,
    /// Congestion responses undone as spurious (Linux TCPFullUndo + TCPPartialUndo +
    /// TCPDSACKUndo + TCPLossUndo).
    pub undo_count: u64,
    /// Of those, undone because every retransmission was D-SACKed.
    pub dsack_undo: u64,
    /// RTOs found spurious and undone (by timestamps, D-SACK or F-RTO).
    pub spurious_rto: u64,
    pub app_limited: bool,
    pub snd_wnd: u32,
    pub rcv_wnd: u32,
    /// The controller's decision state (`CongestionControl::diagnostics`), if it has any.
    pub cc_diag: Option<CcDiagnostics>,
    /// RC3's counters, when RC3 is on (left out of JSON otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rc3: Option<crate::rc3::rlp::Rc3Info>,
}

/// The counters of `TcpInfo` that a connection keeps between `info` calls. Only these
/// are stored (160 B instead of a whole `TcpInfo`'s 448 B): the rest of a snapshot is
/// read from the connection's live state when `Connection::info` builds it, so an idle
/// connection does not carry a copy of fields it never updates.
#[derive(Clone, Debug, Default)]
pub(crate) struct InfoCounts {
    pub retransmits: u64,
    pub retransmitted_bytes: u64,
    pub rdb_packets: u64,
    pub rdb_bytes: u64,
    pub rdb_loss_cwr: u64,
    pub ecn_cwr: u64,
    pub delay_cwr: u64,
    pub lost: u64,
    pub bytes_sent: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u64,
    pub data_segs_out: u64,
    pub segs_in: u64,
    pub dsack_received: u64,
    pub rto_count: u64,
    pub tlp_count: u64,
    pub undo_count: u64,
    pub dsack_undo: u64,
    pub spurious_rto: u64,
}

/// Endpoint-wide counters; every dropped packet is counted under one reason.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct EndpointStats {
    pub packets_in: u64,
    pub packets_out: u64,
    pub drop_parse: u64,
    pub drop_checksum: u64,
    /// Packets addressed to another IP.
    pub drop_not_local: u64,
    /// Packets from a martian source (Linux `martian_source`): unspecified,
    /// `0.0.0.0/8`, multicast, broadcast, IPv4-mapped in an IPv6 header, loopback, or
    /// the endpoint's own address (`Endpoint::martian_source`). Never answered.
    pub drop_martian: u64,
    pub drop_no_socket: u64,
    pub drop_backlog_full: u64,
    pub drop_table_full: u64,
    pub drop_out_of_window: u64,
    pub drop_paws: u64,
    pub challenge_acks: u64,
    /// Replies withheld by the per-connection `Config::invalid_ratelimit` (not drops:
    /// the segments they answered are counted under their own reason).
    pub oow_acks_suppressed: u64,
    /// MPTCP segments refused for their DSS, each resetting its subflow
    /// (`ConnCounters::mptcp_refused`; Linux `DSSNoMatchTCP`, `DataCsumErr`, ...).
    pub mptcp_refused: u64,
    /// MPTCP offers that fell back to plain TCP on a segment (RFC 8684 §3.7; Linux
    /// `MPCapableFallbackACK`, `MPCapableFallbackSYNACK`, `DSSFallback`).
    pub mptcp_fallbacks: u64,
    /// MP_JOIN SYNs refused with a RST carrying MP_TCPRST (every reason).
    pub mptcp_joins_refused: u64,
    /// MP_JOIN SYNs received for no connection (Linux `MPJoinNoTokenFound`).
    pub mptcp_join_no_token: u64,
    /// MP_JOIN SYNs refused at the connection's subflow limit (Linux `MPJoinRejected`).
    pub mptcp_join_rejected: u64,
    /// MP_JOIN SYNs received (Linux `MPJoinSynRx` counts those it accepts).
    pub mptcp_join_syns: u64,
    /// MP_JOIN SYNs accepted: a subflow made in SYN-RECEIVED.
    pub mptcp_joins_accepted: u64,
    /// Subflows the path manager asked for that the endpoint could not open (no
    /// port, an address that is not ours or of the other family).
    pub mptcp_join_open_failed: u64,
    /// MPTCP connections whose token did not fit the token table (they take no joins).
    pub mptcp_tokens_full: u64,
    pub rst_sent: u64,
    /// SYN-ACKs sent with a SYN cookie because the listener's SYN queue was full
    /// (Linux `SyncookiesSent`).
    pub syncookies_sent: u64,
    /// ACKs that returned a valid cookie (Linux `SyncookiesRecv`); the connection is
    /// then created, unless the accept queue or the table is full (counted there).
    pub syncookies_validated: u64,
    /// ACKs to a listener that were checked as cookies and failed: expired, forged,
    /// for another 4-tuple, or asking for options not offered (Linux
    /// `SyncookiesFailed`). The drop reason for them; each is answered with an RST.
    pub syncookies_failed: u64,
    /// Memory accounting (`crate::mem`): bytes charged now (out-of-order stores,
    /// unread in-order data and send buffers, by capacity), the most ever charged, and
    /// of the charge now, what send buffers hold.
    pub mem_charged: u64,
    pub mem_peak: u64,
    pub mem_send: u64,
    /// Writes taken in part or refused because the send allowance ran out (memory
    /// pressure or the hard limit; `crate::mem`).
    pub mem_send_limited: u64,
    /// Data segments dropped because they would have allocated beyond the hard limit
    /// (summed from the connections' `mem_dropped`).
    pub drop_mem: u64,
    /// Pressure episodes (charged bytes above `pressure` after an input).
    pub mem_pressure: u64,
    /// Collapses (Linux `tcp_collapse_ofo_queue`): times, bytes copied, bytes freed.
    pub mem_collapses: u64,
    pub mem_collapsed_bytes: u64,
    pub mem_collapse_freed: u64,
    /// Prunes (Linux `tcp_prune_ofo_queue`, `OFOPruned`): times, payload bytes
    /// dropped, ranges dropped or truncated, charged bytes freed.
    pub mem_prunes: u64,
    pub mem_pruned_bytes: u64,
    pub mem_pruned_ranges: u64,
    pub mem_prune_freed: u64,
}
