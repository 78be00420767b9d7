//! brisk-tcp: the TCP machine. No sockets, clock, threads or global RNG: the same
//! segments, `now` values and seed give the same bytes out. The one exception is
//! `EndpointConfig::default()`, which draws the ISN secret and seed from the OS once
//! at construction; simulators and reproducible runs pass both explicitly.
//!
//! Read in this order: RFC 9293 (state machine), RFC 6298 (RTO), RFC 7323 (timestamps,
//! window scale), RFC 2018/2883 (SACK, D-SACK), RFC 6675 (scoreboard), RFC 8985
//! (RACK-TLP), RFC 6937 (PRR), RFC 3522/5682 (Eifel, F-RTO), RFC 5681/6582
//! (Reno/NewReno), RFC 9438 (CUBIC),
//! RFC 5961 (blind-attack hardening), RFC 6528 (ISNs), RFC 4987 (SYN cookies).
//!
//! Shape (after quinn-proto): input via `handle_*`, output via `poll_*`, application
//! calls in between. After any input, poll `poll_transmit` until `None`, then
//! `poll_event`, then re-read `poll_timeout`.

pub mod cc;
#[doc(hidden)]
pub mod claim_checks;
pub mod config;
pub mod conn;
pub mod endpoint;
pub mod event;
pub mod inspace;
pub mod mem;
pub mod mptcp;
pub mod rangeset;
pub mod rate;
pub mod rc3;
pub mod rdb;
pub mod recovery;
pub mod sent;
pub mod stats;
pub mod stream;
pub mod syncookie;
#[doc(hidden)]
pub mod testkit;
pub mod tfo;
mod timer_heap;

pub use brisk_time::{Duration, Instant};
pub use config::Config;
pub use conn::send::SharedBytes;
pub use conn::{CaState, Connection, Segment, SegmentKind, State, UnorderedRead};
pub use endpoint::{
    AddressError, ConnConfigs, ConnHandle, Endpoint, EndpointConfig, FastOpenClientCounters,
    FastOpenStats, OsRngError, Transmit, MAX_ADDRESSES,
};
pub use event::{ConnError, Event, TraceEvent, UndoKind};
pub use mem::MemLimits;
pub use stats::{EndpointStats, TcpInfo};

#[cfg(test)]
mod tests;
