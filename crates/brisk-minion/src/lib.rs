//! Minion's datagram protocols, written once against [`brisk_tcp::stream::ByteStream`]
//! so they run over brisk in the simulator, over brisk's real-packet socket, and over
//! an ordinary kernel TCP socket (where they fall back to in-order delivery: the
//! deployability argument of Minion, NSDI 2012 §3.3, claim MN-12).
//!
//! - [`frame`]: the uCOBS record, `00 ‖ COBS(datagram) ‖ 00` (Minion §5.2).
//! - [`scan`]: finding and delivering records in a stream that arrives in order and,
//!   with uTCP's unordered receive, out of order (Minion §5.3–5.4; thesis §4.3.3).
//! - [`ucobs`]: the sender and receiver over a byte stream.
//! - [`mstcp`]: several ordered message streams, chunked over uCOBS (Minion §8.5).
//! - [`paper_api`]: the prototype's 5-byte read and write headers (Minion §7), for
//!   tests and ports of code written against that API.
//! - [`utls`]: secure datagrams on the TLS wire format (Minion §6), over rustls.
//!
//! Nothing here owns a clock, a socket or a thread: the caller drives it.

pub mod cpu_cost;
pub mod frame;
pub mod mstcp;
pub mod paper_api;
pub mod scan;
pub mod ucobs;
pub mod utls;
mod window;

pub use frame::{encode_record, max_record_len, FrameError};
pub use scan::{Datagram, Limits, RecordScanner, ScanCounters};
pub use ucobs::{UcobsReceiver, UcobsSender};
