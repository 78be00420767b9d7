//! brisk-app: the applications both the simulator (brisk-sim) and real-packet runs
//! (brisk-emu's `brisk run --real`) drive over brisk-tcp's `ByteStream`, so the two
//! worlds speak the same bytes and measure the same way. Sans-IO: nothing here reads a
//! clock; times come in as arguments.
//!
//! - [`payload`]: the per-flow pattern payload and the stream halves that write it and
//!   check it as it is read (offsets, bad bytes, optional SHA-256).
//! - [`records`]: the `records` app: header framing, the sender's schedule and queue
//!   ([`records::RecordSource`]), the in-order reader that measures each record's
//!   latency and the any-order assembly for unordered receive.
//! - [`bulk`]: the `bulk` app's sender.

pub mod bulk;
pub mod payload;
pub mod records;
