//! What a connection reports to the application (events) and to tracing (trace events).

use crate::cc::CcDiagnostics;
use brisk_time::{Duration, Instant};
use thiserror::Error;

/// Why a connection ended other than by a clean close.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum ConnError {
    #[error("connection reset by peer")]
    Reset,
    #[error("connection refused")]
    Refused,
    #[error("timed out after {retries} retransmissions")]
    TimedOut { retries: u32 },
    #[error("user timeout expired")]
    UserTimeout,
    #[error("keepalive probes unanswered")]
    KeepaliveTimeout,
    #[error("aborted locally")]
    Aborted,
    /// `listen`/`connect`: the port or 4-tuple is taken.
    #[error("address in use")]
    AddrInUse,
    /// The endpoint's connection table (or ephemeral port range) is full.
    #[error("connection table full")]
    TableFull,
    /// An address family or configuration the endpoint does not support.
    #[error("unsupported address")]
    Unsupported,
}

/// Application-facing events, polled with `Endpoint::poll_event`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// An active open completed.
    Connected,
    /// A listener has a new established connection ready for `accept`.
    Incoming { port: u16 },
    /// New data can be read.
    Readable,
    /// Send-buffer space became available.
    Writable,
    /// The peer sent FIN: no more data will arrive (after what is buffered).
    PeerClosed,
    /// The connection is gone: `Ok(())` after a clean close, else the error.
    Closed(Result<(), ConnError>),
}

/// Tracing events, recorded only when tracing is on (`Connection::set_trace`). Not
/// `Copy`: `CcState` may hold a boxed diagnostics (BBR v3's).
#[derive(Clone, Debug, PartialEq)]
pub enum TraceEvent {
    /// One RTT sample (the sender's measurement).
    RttSample { at: Instant, rtt: Duration },
    /// cwnd/ssthresh after a change, segments.
    Cwnd {
        at: Instant,
        cwnd: u32,
        ssthresh: u32,
    },
    /// A segment was retransmitted (`seq` relative to ISN).
    Retransmit {
        at: Instant,
        seq: u64,
        len: u32,
        kind: RetransmitKind,
    },
    /// Fast recovery started / ended.
    Recovery { at: Instant, enter: bool },
    /// RTO fired.
    Rto { at: Instant, backoff: u32 },
    /// A congestion response was found spurious and undone; cwnd/ssthresh after it.
    Undo {
        at: Instant,
        kind: UndoKind,
        cwnd: u32,
        ssthresh: u32,
    },
    /// The controller's diagnostics after a change (for delay correlation: after
    /// every consult and every clamp/release), from
    /// `CongestionControl::diagnostics_changed`.
    CcState { at: Instant, diag: CcDiagnostics },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetransmitKind {
    Fast,
    Rto,
    Tlp,
}

/// What an undo undid and what proved it spurious (Linux's undo MIB counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UndoKind {
    /// Fast recovery ended and the ACK echoed a timestamp from before the first
    /// retransmission, or nothing was retransmitted (Linux `TCPFullUndo`, Eifel).
    Recovery,
    /// A partial ACK during recovery was for an original transmission (Linux
    /// `TCPPartialUndo`).
    Partial,
    /// Every retransmission of the episode was D-SACKed (Linux `TCPDSACKUndo`).
    Dsack,
    /// An RTO, by timestamps or D-SACK (Linux `TCPLossUndo`).
    Loss,
    /// An RTO, by F-RTO (Linux `TCPSpuriousRTOs`).
    Frto,
}
