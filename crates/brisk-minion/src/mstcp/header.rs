//! The msTCP chunk header (thesis §6.2.3: "a 16-byte chunk header" with a 16-bit
//! stream identifier and a 16-bit stream sequence number; spec `minion.md` §5). The
//! thesis names only those two fields; the other 12 bytes are our choice (the spec's
//! resolution [R], docs/mechanisms/mstcp.md), all big-endian:
//!
//! ```text
//!  0      2      4     5     6      8          12          16
//!  | sid  | sseq | flg | rsv | plen | msg_id    | msg_off   |
//! ```
//!
//! - `sid`: stream identifier; `sseq`: the chunk's number within its stream (wraps
//!   at 2^16; the receiver orders by distance from the next expected number).
//! - `flg`: [`END_OF_MSG`] (the chunk ends its message), [`END_OF_STREAM`] (the last
//!   chunk of the stream: the receiver forgets the stream after it). Other bits are
//!   reserved and must be zero.
//! - `rsv`: reserved, zero.
//! - `plen`: the payload's length; it must equal the bytes after the header (a
//!   check that the uCOBS record is the chunk, no more, no less).
//! - `msg_id`: the message's number within its stream; `msg_off`: the payload's
//!   offset within the message. Both are redundant with `sseq` for a correct
//!   sender; the receiver checks them, so a corrupted or misbehaving sender breaks
//!   one stream instead of splicing messages.

use thiserror::Error;

/// Bytes of a chunk header.
pub const HEADER_LEN: usize = 16;
/// The chunk ends its message.
pub const END_OF_MSG: u8 = 0x01;
/// The chunk is the stream's last.
pub const END_OF_STREAM: u8 = 0x02;
const KNOWN_FLAGS: u8 = END_OF_MSG | END_OF_STREAM;

/// A decoded chunk header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ChunkHeader {
    pub stream: u16,
    pub seq: u16,
    pub flags: u8,
    pub len: u16,
    pub msg_id: u32,
    pub msg_offset: u32,
}

/// Why a datagram is not a chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum HeaderError {
    #[error("chunk of {0} bytes is shorter than the 16-byte header")]
    Short(usize),
    #[error("unknown flag bits {0:#04x}")]
    Flags(u8),
    #[error("reserved byte is {0:#04x}, must be 0")]
    Reserved(u8),
    #[error("payload length field {field} but {actual} bytes follow the header")]
    Length { field: u16, actual: usize },
    #[error("END_OF_STREAM without END_OF_MSG")]
    StreamEndMidMessage,
}

impl ChunkHeader {
    pub fn end_of_msg(&self) -> bool {
        self.flags & END_OF_MSG != 0
    }
    pub fn end_of_stream(&self) -> bool {
        self.flags & END_OF_STREAM != 0
    }

    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..2].copy_from_slice(&self.stream.to_be_bytes());
        h[2..4].copy_from_slice(&self.seq.to_be_bytes());
        h[4] = self.flags;
        h[5] = 0;
        h[6..8].copy_from_slice(&self.len.to_be_bytes());
        h[8..12].copy_from_slice(&self.msg_id.to_be_bytes());
        h[12..16].copy_from_slice(&self.msg_offset.to_be_bytes());
        h
    }

    /// Decodes the header of chunk `d` (header and payload) and checks it against the
    /// payload's length. Returns the header and the payload.
    pub fn decode(d: &[u8]) -> Result<(ChunkHeader, &[u8]), HeaderError> {
        if d.len() < HEADER_LEN {
            return Err(HeaderError::Short(d.len()));
        }
        let u16_at = |i: usize| u16::from_be_bytes([d[i], d[i + 1]]);
        let u32_at = |i: usize| u32::from_be_bytes([d[i], d[i + 1], d[i + 2], d[i + 3]]);
        let h = ChunkHeader {
            stream: u16_at(0),
            seq: u16_at(2),
            flags: d[4],
            len: u16_at(6),
            msg_id: u32_at(8),
            msg_offset: u32_at(12),
        };
        if h.flags & !KNOWN_FLAGS != 0 {
            return Err(HeaderError::Flags(h.flags));
        }
        if d[5] != 0 {
            return Err(HeaderError::Reserved(d[5]));
        }
        let payload = &d[HEADER_LEN..];
        if usize::from(h.len) != payload.len() {
            return Err(HeaderError::Length {
                field: h.len,
                actual: payload.len(),
            });
        }
        if h.end_of_stream() && !h.end_of_msg() {
            return Err(HeaderError::StreamEndMidMessage);
        }
        Ok((h, payload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_layout() {
        let h = ChunkHeader {
            stream: 0x0102,
            seq: 0xfffe,
            flags: END_OF_MSG,
            len: 3,
            msg_id: 7,
            msg_offset: 0x0a0b0c0d,
        };
        let mut d = h.encode().to_vec();
        assert_eq!(
            d,
            [1, 2, 0xff, 0xfe, 1, 0, 0, 3, 0, 0, 0, 7, 0x0a, 0x0b, 0x0c, 0x0d]
        );
        d.extend_from_slice(b"abc");
        assert_eq!(ChunkHeader::decode(&d), Ok((h, &b"abc"[..])));
    }

    #[test]
    fn malformed_headers_are_errors() {
        let h = ChunkHeader {
            len: 2,
            ..ChunkHeader::default()
        };
        let mut d = h.encode().to_vec();
        d.extend_from_slice(b"xy");
        assert_eq!(ChunkHeader::decode(&d[..15]), Err(HeaderError::Short(15)));
        assert_eq!(
            ChunkHeader::decode(&d[..17]),
            Err(HeaderError::Length {
                field: 2,
                actual: 1
            })
        );
        let mut bad = d.clone();
        bad[4] = 0x80;
        assert_eq!(ChunkHeader::decode(&bad), Err(HeaderError::Flags(0x80)));
        let mut bad = d.clone();
        bad[5] = 1;
        assert_eq!(ChunkHeader::decode(&bad), Err(HeaderError::Reserved(1)));
        let mut bad = d;
        bad[4] = END_OF_STREAM;
        assert_eq!(
            ChunkHeader::decode(&bad),
            Err(HeaderError::StreamEndMidMessage)
        );
    }
}
