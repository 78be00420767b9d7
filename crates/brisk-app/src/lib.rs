//! brisk-app: what applications share across byte streams, so the simulator
//! (brisk-sim) and real-packet runs (brisk-emu) speak the same bytes and measure the
//! same way. Sans-IO: nothing here reads a clock; times come in as arguments.
//!
//! [`records`] is the `records` app's framing: header encode/decode and an incremental
//! reader that measures each record's latency.

pub mod records;
