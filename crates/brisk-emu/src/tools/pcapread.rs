//! Reading back the pcaps the lab writes (classic pcap, LINKTYPE_RAW, micro- or
//! nanosecond timestamps), for tests and for a malformed-packet check that needs no
//! tshark: [`check_well_formed`] parses every packet with brisk-wire.

use std::io::{self, ErrorKind, Read};
use std::path::Path;

/// Largest record accepted (a corrupt length must not allocate gigabytes).
const MAX_RECORD: u32 = 256 * 1024;

/// One captured packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Timestamp in ns.
    pub ts_ns: u64,
    pub data: Vec<u8>,
}

fn bad(m: &str) -> io::Error {
    io::Error::new(ErrorKind::InvalidData, m.to_string())
}

/// Parses a whole pcap file from memory.
pub fn parse(bytes: &[u8]) -> io::Result<Vec<Record>> {
    let hdr = bytes
        .get(..24)
        .ok_or_else(|| bad("pcap shorter than its header"))?;
    let magic = [hdr[0], hdr[1], hdr[2], hdr[3]];
    let (le, nanos) = match magic {
        [0xd4, 0xc3, 0xb2, 0xa1] => (true, false),
        [0x4d, 0x3c, 0xb2, 0xa1] => (true, true),
        [0xa1, 0xb2, 0xc3, 0xd4] => (false, false),
        [0xa1, 0xb2, 0x3c, 0x4d] => (false, true),
        _ => return Err(bad("not a pcap file")),
    };
    let u32_at = |b: &[u8], i: usize| -> u32 {
        let a = [b[i], b[i + 1], b[i + 2], b[i + 3]];
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let mut out = Vec::new();
    let mut off = 24usize;
    while off < bytes.len() {
        let rh = bytes
            .get(off..off + 16)
            .ok_or_else(|| bad("truncated record header"))?;
        let (sec, frac, incl) = (u32_at(rh, 0), u32_at(rh, 4), u32_at(rh, 8));
        if incl > MAX_RECORD {
            return Err(bad("record too long"));
        }
        let start = off + 16;
        let data = bytes
            .get(start..start + incl as usize)
            .ok_or_else(|| bad("truncated record"))?;
        let ts_ns = u64::from(sec) * 1_000_000_000
            + if nanos {
                u64::from(frac)
            } else {
                u64::from(frac) * 1000
            };
        out.push(Record {
            ts_ns,
            data: data.to_vec(),
        });
        off = start + incl as usize;
    }
    Ok(out)
}

/// Reads and parses a pcap file.
pub fn read(path: &Path) -> io::Result<Vec<Record>> {
    let mut v = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut v)?;
    parse(&v)
}

/// Indices of packets brisk-wire cannot parse as IPv4/TCP with valid checksums.
pub fn check_well_formed(records: &[Record]) -> Vec<usize> {
    records
        .iter()
        .enumerate()
        .filter(|(_, r)| brisk_wire::parse_tcp_packet(&r.data).is_err())
        .map(|(i, _)| i)
        .collect()
}

/// If `tshark` is installed, the number of packets it flags as malformed in `path`
/// (`Some(0)` is clean); `None` when tshark is absent.
pub fn tshark_malformed(path: &Path) -> Option<io::Result<usize>> {
    let ok = std::process::Command::new("tshark")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        return None;
    }
    let out = std::process::Command::new("tshark")
        .arg("-n")
        .arg("-r")
        .arg(path)
        .args(["-Y", "_ws.malformed"])
        .output();
    Some(out.and_then(|o| {
        if !o.status.success() {
            return Err(io::Error::other(
                String::from_utf8_lossy(&o.stderr).trim().to_string(),
            ));
        }
        Ok(String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_wire::pcap::PcapWriter;

    #[test]
    fn reads_back_what_the_writer_wrote() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write_packet(1_500_000_123, &[1, 2, 3]).unwrap();
        w.write_packet(2_000_000_000, &[4; 100]).unwrap();
        let bytes = w.into_inner();
        let r = parse(&bytes).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].data, vec![1, 2, 3]);
        assert_eq!(r[1].data.len(), 100);
        assert_eq!(r[1].ts_ns, 2_000_000_000);
        assert!(r[0].ts_ns / 1000 == 1_500_000);
        assert!(parse(&bytes[..bytes.len() - 1]).is_err());
        assert_eq!(check_well_formed(&r), vec![0, 1]);
    }
}
