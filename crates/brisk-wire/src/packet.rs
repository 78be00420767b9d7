//! Whole IP packets carrying TCP: what the simulator and the TUN device move around.

use crate::error::ParseError;
use crate::ip::{Ecn, IpRepr};
use crate::tcp::TcpRepr;

/// Parses an IP packet carrying TCP. Verifies the IPv4 header checksum and the TCP checksum.
pub fn parse_tcp_packet(buf: &[u8]) -> Result<(IpRepr, TcpRepr<'_>), ParseError> {
    let _ = buf;
    todo!("brisk-wire helper")
}

/// Clears `out` and writes IP header + TCP segment. Lengths and checksums are computed
/// here (`ip`'s `payload_len` is ignored).
pub fn emit_tcp_packet(ip: &IpRepr, tcp: &TcpRepr<'_>, out: &mut Vec<u8>) {
    let _ = (ip, tcp, out);
    todo!("brisk-wire helper")
}

/// ECN bits of a raw IP packet, without a full parse. None if too short / not IP.
pub fn peek_ecn(buf: &[u8]) -> Option<Ecn> {
    let _ = buf;
    todo!("brisk-wire helper")
}

/// DSCP of a raw IP packet, without a full parse.
pub fn peek_dscp(buf: &[u8]) -> Option<u8> {
    let _ = buf;
    todo!("brisk-wire helper")
}

/// Sets CE on an ECN-capable packet in place (RFC 3168 §5), fixing the IPv4 header
/// checksum incrementally (RFC 1624). Returns false, changing nothing, if the packet is
/// Not-ECT or not IP.
pub fn mark_ce(buf: &mut [u8]) -> bool {
    let _ = buf;
    todo!("brisk-wire helper")
}
