//! brisk-wire: packet formats. Parse and emit IPv4 (and IPv6) and TCP with every
//! flag and the options Linux uses (RFC 9293, RFC 7323, RFC 2018, RFC 3168), and UDP
//! (RFC 768) for the simulator's datagram flows, and the MPTCP option (kind 30, RFC
//! 8684 v1: [`mptcp`]) typed on top of the raw [`ExtraOptions`].
//!
//! Promises, after smoltcp's `wire`:
//! - parsing never panics and never allocates: truncated or inconsistent input is a
//!   typed `ParseError`, one variant per drop reason;
//! - emitting appends to a `Vec<u8>`, so there is no buffer to overflow; it writes
//!   exactly `header_len()` header bytes (TCP options in Linux's order and padding,
//!   never more than 40 bytes: SACK blocks that do not fit are left out);
//! - `parse(emit(x)) == x` for every representable `x` (`tests/roundtrip.rs` checks it
//!   over the whole space, the `wire` fuzz target on whatever parses). The types make
//!   the header's limits unrepresentable rather than silently changed: [`Flags`] holds
//!   only the nine header bits and [`WindowScale`] at most 14 (RFC 7323 §2.3). What
//!   `emit` leaves out by design is part of `x`'s emitted form, not a broken promise:
//!   SACK blocks beyond [`TcpRepr::sack_blocks_emitted`], extra options that do not fit
//!   beside the standard ones, and the IP length fields, which `emit` computes. The IP
//!   header's `dscp` (6 bits) and IPv6 `flow_label` (20 bits) are plain integers:
//!   only values in those ranges round-trip.

pub mod checksum;
pub mod error;
pub mod ip;
pub mod mptcp;
pub mod packet;
pub mod pcap;
pub mod pcapng;
pub mod peek;
pub mod seq;
pub mod tcp;
pub mod udp;

pub use error::ParseError;
pub use ip::{Ecn, IpRepr, Ipv4Repr, Ipv6Repr, IPPROTO_TCP};
pub use packet::{
    emit_tcp_packet, mark_ce, parse_tcp_packet, parse_tcp_packet_into, parse_tcp_packet_trusted,
    parse_tcp_packet_trusted_into, peek_dscp, peek_ecn,
};
pub use pcap::PcapWriter;
pub use peek::FlowKey;
pub use seq::SeqNum;
pub use tcp::fastopen;
pub use tcp::{
    ExtraOptionError, ExtraOptions, Flags, SackBlock, SackBlocks, TcpRepr, Timestamps, WindowScale,
    MAX_OPTIONS_LEN, MAX_WINDOW_SCALE,
};
pub use udp::{emit_udp_packet, parse_udp_packet, UdpRepr, IPPROTO_UDP};
