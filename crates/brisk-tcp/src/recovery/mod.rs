//! Loss detection and recovery, kept apart from congestion control.
//!
//! - `scoreboard`: outstanding segments with SACK/lost/retransmitted marks (RFC 6675).
//! - `rack`: RACK time-based loss detection (RFC 8985 §6).
//! - `tlp`: tail loss probe timing and episode tracking (RFC 8985 §7).
//! - `rto`: RTO backoff arithmetic (RFC 6298 §5).
//! - `undo`, `frto`: undo of spurious recoveries and RTOs (RFC 2883/3708 D-SACK,
//!   RFC 3522 Eifel, RFC 5682 F-RTO; Linux's undo machinery).
//! - `rtt`, `minmax`, `prr`: RTT estimation, windowed min filter, PRR (RFC 6937).

pub mod frto;
pub mod minmax;
pub mod prr;
pub mod rack;
pub mod rto;
pub mod rtt;
pub mod scoreboard;
pub mod tlp;
pub mod undo;

pub use prr::Prr;
pub use rtt::RttEstimator;
