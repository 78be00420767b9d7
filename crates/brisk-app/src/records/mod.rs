//! Record framing of the `records` app: each record is `size` bytes, starting with a
//! 24-byte header `magic "BRK1" | index u64 | send time ns u64 | length u32`
//! (big-endian), then `size - 24` body bytes the sender chooses. The receiver parses
//! records out of the byte stream and counts one delivered when its last byte has been
//! read, with latency `read time - send time`.
//!
//! [`RecordSource`] generates records on their schedule and writes them;
//! [`RecordReader`] parses the in-order stream; [`RecordAssembly`] counts a record
//! delivered once all its bytes have reached the app in any order (unordered receive,
//! where each byte is handed over first-delivery only).
//!
//! The simulator and the real-packet runs both use this module, so their streams are
//! byte-compatible and their record latencies mean the same thing.

mod assembly;
mod reader;
mod source;

pub use assembly::{RecordAssembly, MAX_PARTIAL_RECORDS};
pub use reader::RecordReader;
pub use source::{normal, RecordPlan, RecordSource, MAX_PENDING_RECORDS};

/// Length of a record header.
pub const HEADER_LEN: usize = 24;
/// The first four bytes of every record.
pub const MAGIC: [u8; 4] = *b"BRK1";
/// Largest record size the apps accept (bounds the sender's buffer).
pub const MAX_RECORD: u64 = 64 << 20;
/// Most (generation, time) pairs kept per flow for the latency after first
/// transmission (a 24 h run of 20 ms records has 4.3 M; beyond this, none are added).
pub const MAX_RECORD_TIMES: usize = 1 << 22;

/// A record header's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    /// 0-based position of the record in the stream.
    pub index: u64,
    /// When the record was (scheduled to be) sent, ns on the run's clock.
    pub sent_at_ns: u64,
    /// The whole record's length, header included.
    pub len: u32,
}

impl RecordHeader {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..4].copy_from_slice(&MAGIC);
        h[4..12].copy_from_slice(&self.index.to_be_bytes());
        h[12..20].copy_from_slice(&self.sent_at_ns.to_be_bytes());
        h[20..24].copy_from_slice(&self.len.to_be_bytes());
        h
    }

    /// The fields of `h` whatever its magic, and whether the magic matched: a reader
    /// still takes the send time from a damaged header so the stream stays in step.
    pub fn decode(h: &[u8; HEADER_LEN]) -> (RecordHeader, bool) {
        let be64 = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&h[at..at + 8]);
            u64::from_be_bytes(b)
        };
        let header = RecordHeader {
            index: be64(4),
            sent_at_ns: be64(12),
            len: u32::from_be_bytes([h[20], h[21], h[22], h[23]]),
        };
        (header, h[0..4] == MAGIC)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn record(index: u64, sent_at_ns: u64, size: usize) -> Vec<u8> {
        let mut r = vec![7u8; size];
        let h = RecordHeader {
            index,
            sent_at_ns,
            len: size as u32,
        };
        r[..HEADER_LEN].copy_from_slice(&h.encode());
        r
    }

    #[test]
    fn header_round_trips() {
        let h = RecordHeader {
            index: 3,
            sent_at_ns: 1 << 40,
            len: 1448,
        };
        let b = h.encode();
        assert_eq!(&b[..4], b"BRK1");
        assert_eq!(RecordHeader::decode(&b), (h, true));
        let mut bad = b;
        bad[1] = 0;
        assert_eq!(RecordHeader::decode(&bad), (h, false));
    }
}
