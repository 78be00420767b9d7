//! pcap writer, LINKTYPE_RAW (101): each record is a bare IP packet.
//!
//! Uses the nanosecond-resolution variant of the classic pcap format (magic
//! `0xa1b23c4d`), little-endian, so simulator timestamps survive exactly.

use std::io::{self, Write};

/// Nanosecond-resolution pcap magic.
pub const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: records start with the IPv4 or IPv6 header.
pub const LINKTYPE_RAW: u32 = 101;
/// Longest record kept; longer packets are truncated (their original length is kept).
pub const SNAPLEN: u32 = 65535;

const NS_PER_S: u64 = 1_000_000_000;

/// Writes a pcap stream to `W`. Buffering is the caller's choice (wrap a `File` in a
/// `BufWriter`).
pub struct PcapWriter<W: Write> {
    w: W,
    snaplen: u32,
}

/// Smallest snapshot length accepted: an IPv6 header plus a TCP header with the
/// largest options (40 + 60), so a headers-only capture never cuts a header.
pub const MIN_SNAPLEN: u32 = 100;

impl<W: Write> PcapWriter<W> {
    /// Writes the 24-byte global header; records keep at most [`SNAPLEN`] bytes.
    pub fn new(w: W) -> io::Result<Self> {
        Self::with_snaplen(w, SNAPLEN)
    }

    /// As `new`, keeping at most `snaplen` bytes of each packet (clamped to
    /// [`MIN_SNAPLEN`]..=[`SNAPLEN`]): `--snaplen 128` keeps headers only, for runs whose
    /// full capture would be gigabytes.
    pub fn with_snaplen(mut w: W, snaplen: u32) -> io::Result<Self> {
        let snaplen = snaplen.clamp(MIN_SNAPLEN, SNAPLEN);
        let mut hdr = [0u8; 24];
        hdr[0..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
        hdr[4..6].copy_from_slice(&2u16.to_le_bytes());
        hdr[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone and sigfigs stay zero.
        hdr[16..20].copy_from_slice(&snaplen.to_le_bytes());
        hdr[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
        w.write_all(&hdr)?;
        Ok(PcapWriter { w, snaplen })
    }

    /// Appends one record stamped `ts_ns` nanoseconds after the epoch (simulated time).
    pub fn write_packet(&mut self, ts_ns: u64, data: &[u8]) -> io::Result<()> {
        // Seconds saturate past 2106; simulated runs are far shorter.
        let secs = u32::try_from(ts_ns / NS_PER_S).unwrap_or(u32::MAX);
        let nanos = (ts_ns % NS_PER_S) as u32;
        let orig_len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        let incl_len = orig_len.min(self.snaplen);
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&secs.to_le_bytes());
        rec[4..8].copy_from_slice(&nanos.to_le_bytes());
        rec[8..12].copy_from_slice(&incl_len.to_le_bytes());
        rec[12..16].copy_from_slice(&orig_len.to_le_bytes());
        self.w.write_all(&rec)?;
        self.w.write_all(&data[..incl_len as usize])
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    pub fn get_ref(&self) -> &W {
        &self.w
    }

    pub fn into_inner(self) -> W {
        self.w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_header_is_nanosecond_raw_ip() {
        let w = PcapWriter::new(Vec::new()).unwrap().into_inner();
        assert_eq!(
            w,
            [
                0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 101,
                0, 0, 0
            ]
        );
    }

    #[test]
    fn record_splits_timestamp_into_seconds_and_nanoseconds() {
        let mut p = PcapWriter::new(Vec::new()).unwrap();
        p.write_packet(3_000_000_123, &[0x45, 1, 2]).unwrap();
        let w = p.into_inner();
        assert_eq!(
            &w[24..],
            &[3, 0, 0, 0, 123, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 0x45, 1, 2]
        );
    }

    #[test]
    fn a_small_snaplen_keeps_headers_only() {
        let mut w = PcapWriter::with_snaplen(Vec::new(), 128).unwrap();
        w.write_packet(5, &[7u8; 1500]).unwrap();
        let w = w.into_inner();
        assert_eq!(&w[16..20], &128u32.to_le_bytes());
        assert_eq!(&w[32..36], &128u32.to_le_bytes(), "incl_len");
        assert_eq!(&w[36..40], &1500u32.to_le_bytes(), "orig_len");
        assert_eq!(w.len(), 24 + 16 + 128);
        let w = PcapWriter::with_snaplen(Vec::new(), 10)
            .unwrap()
            .into_inner();
        assert_eq!(&w[16..20], &MIN_SNAPLEN.to_le_bytes(), "clamped");
    }

    #[test]
    fn oversized_packet_is_truncated_to_snaplen() {
        let mut p = PcapWriter::new(Vec::new()).unwrap();
        let big = vec![0u8; 70_000];
        p.write_packet(0, &big).unwrap();
        let w = p.into_inner();
        assert_eq!(&w[32..36], &65535u32.to_le_bytes());
        assert_eq!(&w[36..40], &70_000u32.to_le_bytes());
        assert_eq!(w.len(), 24 + 16 + 65535);
    }
}
