//! brisk-wire: packet formats. Parse and emit IPv4 (and IPv6) and TCP with every
//! flag and the options Linux uses (RFC 9293, RFC 7323, RFC 2018, RFC 3168).
//!
//! Two promises, after smoltcp's `wire`:
//! - parsing never panics: truncated or inconsistent input is a typed `ParseError`;
//! - emitting never panics on a buffer of at least `buffer_len()` bytes.

pub mod checksum;
pub mod error;
pub mod ip;
pub mod packet;
pub mod pcap;
pub mod seq;
pub mod tcp;

pub use error::ParseError;
pub use ip::{Ecn, IpRepr, Ipv4Repr, IPPROTO_TCP};
pub use packet::{emit_tcp_packet, mark_ce, parse_tcp_packet, peek_dscp, peek_ecn};
pub use seq::SeqNum;
pub use tcp::{Flags, SackBlock, SackBlocks, TcpRepr, Timestamps};
