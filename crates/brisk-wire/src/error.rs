//! Why a packet could not be parsed. One variant per cause so drops can be counted by reason.

use thiserror::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
pub enum ParseError {
    /// The buffer ends before the header (or the length a header claims) does.
    #[error("truncated packet")]
    Truncated,
    /// IP version nibble is neither 4 nor 6.
    #[error("unsupported IP version {0}")]
    BadVersion(u8),
    /// IPv4 IHL < 5, or total length inconsistent with IHL/buffer.
    #[error("bad IP header length")]
    BadIpLength,
    /// IP header checksum does not verify.
    #[error("bad IPv4 header checksum")]
    BadIpChecksum,
    /// A fragment (MF set or offset != 0): brisk does not reassemble IP fragments.
    #[error("IP fragment")]
    Fragment,
    /// The IP protocol / next header is not TCP.
    #[error("not TCP (protocol {0})")]
    NotTcp(u8),
    /// TCP data offset < 5 or past the end of the segment.
    #[error("bad TCP data offset")]
    BadDataOffset,
    /// TCP checksum (over the pseudo-header) does not verify.
    #[error("bad TCP checksum")]
    BadChecksum,
    /// A known option with an impossible length, or an option running past the header.
    #[error("bad TCP option (kind {kind})")]
    BadOption { kind: u8 },
    /// The IP protocol / next header is not UDP (for UDP users).
    #[error("not UDP (protocol {0})")]
    NotUdp(u8),
    /// UDP length shorter than its header or longer than the IP payload.
    #[error("bad UDP length")]
    BadUdpLength,
    /// UDP checksum (over the pseudo-header) does not verify.
    #[error("bad UDP checksum")]
    BadUdpChecksum,
}
