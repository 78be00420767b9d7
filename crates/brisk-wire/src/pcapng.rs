//! pcapng output for captures that carry more than packets: one interface of raw IP
//! packets with nanosecond timestamps, and a comment option per packet where brisk has
//! something to say (why the bottleneck dropped it). Wireshark shows the comments and
//! filters on them (`frame.comment contains "drop"`). The block encoding is the
//! `pcap-file` crate's; this module only fixes brisk's choices (LINKTYPE_RAW,
//! `if_tsresol` = 9, the snap length).

use std::borrow::Cow;
use std::io::{self, Write};
use std::time::Duration;

use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::PcapNgWriter as Inner;
use pcap_file::DataLink;

use crate::pcap::MIN_SNAPLEN;

fn io_err(e: pcap_file::PcapError) -> io::Error {
    match e {
        pcap_file::PcapError::IoError(e) => e,
        other => io::Error::other(other.to_string()),
    }
}

/// Writes raw-IP packets with optional comments into a pcapng stream.
pub struct PcapNgWriter<W: Write> {
    inner: Inner<W>,
    snaplen: u32,
}

impl<W: Write> PcapNgWriter<W> {
    /// Starts the file (section header, one interface named `name`), keeping at most
    /// `snaplen` bytes of each packet (at least [`MIN_SNAPLEN`]).
    pub fn new(w: W, name: &str, snaplen: u32) -> io::Result<Self> {
        let snaplen = snaplen.max(MIN_SNAPLEN);
        let mut inner = Inner::new(w).map_err(io_err)?;
        inner
            .write_pcapng_block(InterfaceDescriptionBlock {
                linktype: DataLink::RAW,
                snaplen,
                options: vec![
                    InterfaceDescriptionOption::IfName(Cow::Owned(name.to_string())),
                    // Timestamps are in nanoseconds (pcap-file writes them as given).
                    InterfaceDescriptionOption::IfTsResol(9),
                ],
            })
            .map_err(io_err)?;
        Ok(PcapNgWriter { inner, snaplen })
    }

    /// One packet at `ts` (from the start of the run) of which `data` is all or the
    /// start; `orig_len` is its full length. `comment` is attached to it.
    pub fn write(
        &mut self,
        ts: Duration,
        data: &[u8],
        orig_len: usize,
        comment: Option<&str>,
    ) -> io::Result<()> {
        let keep = data.len().min(self.snaplen as usize);
        let block = EnhancedPacketBlock {
            interface_id: 0,
            timestamp: ts,
            original_len: u32::try_from(orig_len).unwrap_or(u32::MAX),
            data: Cow::Borrowed(&data[..keep]),
            options: comment
                .map(|c| vec![EnhancedPacketOption::Comment(Cow::Borrowed(c))])
                .unwrap_or_default(),
        };
        self.inner.write_pcapng_block(block).map_err(io_err)?;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.inner.get_mut().flush()
    }

    pub fn into_inner(self) -> W {
        self.inner.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcap_file::pcapng::{Block, PcapNgReader};

    #[test]
    fn packets_and_comments_read_back() {
        let mut w = PcapNgWriter::new(Vec::new(), "bottleneck", 128).unwrap();
        let pkt = vec![0x45u8; 200];
        w.write(Duration::from_nanos(1_500_000_123), &pkt, 200, None)
            .unwrap();
        w.write(Duration::from_secs(2), &pkt, 200, Some("drop: queue_full"))
            .unwrap();
        let bytes = w.into_inner();
        let mut r = PcapNgReader::new(&bytes[..]).unwrap();
        let mut seen = Vec::new();
        while let Some(b) = r.next_block() {
            if let Block::EnhancedPacket(e) = b.unwrap() {
                let comment = e.options.iter().find_map(|o| match o {
                    EnhancedPacketOption::Comment(c) => Some(c.to_string()),
                    _ => None,
                });
                seen.push((
                    e.timestamp.as_nanos(),
                    e.data.len(),
                    e.original_len,
                    comment,
                ));
            }
        }
        assert_eq!(
            seen,
            vec![
                (1_500_000_123, 128, 200, None),
                (
                    2_000_000_000,
                    128,
                    200,
                    Some("drop: queue_full".to_string())
                ),
            ]
        );
    }
}
