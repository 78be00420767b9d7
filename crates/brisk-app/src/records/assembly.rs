//! Records delivered in any order (unordered receive): a record counts once all its
//! bytes have reached the app, with the send time from its header.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use super::{RecordHeader, HEADER_LEN};

/// Most records with some but not all bytes delivered.
pub const MAX_PARTIAL_RECORDS: usize = 1 << 16;

/// Per-record byte accounting for `records` when pieces arrive in any order. Records
/// are `size` bytes at offsets `k * size`, each starting with its header.
#[derive(Debug)]
pub struct RecordAssembly {
    size: u64,
    /// Record index -> bytes delivered and the header bytes seen so far.
    partial: BTreeMap<u64, Partial>,
    /// Records all of whose bytes have been delivered.
    pub completed: u64,
    /// Pieces not tracked because `partial` was full.
    pub untracked: u64,
}

#[derive(Debug, Default)]
struct Partial {
    got: u64,
    header: [u8; HEADER_LEN],
}

/// The send time, ns, of the record starting with `header` (at least a header long,
/// as records are: their size is at least [`HEADER_LEN`]).
fn sent_at(header: &[u8]) -> u64 {
    header
        .first_chunk::<HEADER_LEN>()
        .map_or(0, |h| RecordHeader::decode(h).0.sent_at_ns)
}

impl RecordAssembly {
    pub fn new(size: u64) -> Self {
        RecordAssembly {
            size: size.max(HEADER_LEN as u64),
            partial: BTreeMap::new(),
            completed: 0,
            untracked: 0,
        }
    }

    /// Records in progress.
    pub fn partial_records(&self) -> usize {
        self.partial.len()
    }

    /// `data`, first delivered at stream offset `off`; calls `done(sent_at_ns)` for each
    /// record whose last missing byte this is. Every byte must be passed exactly once.
    pub fn add(&mut self, off: u64, data: &[u8], mut done: impl FnMut(u64)) {
        let mut i = 0;
        while i < data.len() {
            let o = off + i as u64;
            let (idx, pos) = (o / self.size, o % self.size);
            let n = (self.size - pos).min((data.len() - i) as u64) as usize;
            let piece = &data[i..i + n];
            i += n;
            if pos == 0 && n as u64 == self.size {
                self.completed += 1;
                done(sent_at(piece));
                continue;
            }
            let full = self.partial.len() >= MAX_PARTIAL_RECORDS;
            let p = match self.partial.entry(idx) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(_) if full => {
                    self.untracked += 1;
                    continue;
                }
                Entry::Vacant(v) => v.insert(Partial::default()),
            };
            let hdr = HEADER_LEN as u64;
            if pos < hdr {
                let k = (hdr - pos).min(n as u64) as usize;
                p.header[pos as usize..pos as usize + k].copy_from_slice(&piece[..k]);
            }
            p.got += n as u64;
            if p.got >= self.size {
                let header = p.header;
                self.partial.remove(&idx);
                self.completed += 1;
                done(sent_at(&header));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unframed(idx: u64, sent_ns: u64, size: usize) -> Vec<u8> {
        let mut r = vec![0xAB; size];
        r[4..12].copy_from_slice(&idx.to_be_bytes());
        r[12..20].copy_from_slice(&sent_ns.to_be_bytes());
        r
    }

    #[test]
    fn a_record_completes_when_its_last_piece_arrives_in_any_order() {
        let size = 100usize;
        let stream: Vec<u8> = (0..4u64)
            .flat_map(|k| unframed(k, 1000 + k, size))
            .collect();
        let mut a = RecordAssembly::new(size as u64);
        let mut done = vec![];
        // Pieces: record 1's tail, record 2 whole, record 0 whole + record 1's head
        // (split inside the header), then record 3 in two pieces.
        for (s, e) in [
            (130, 200),
            (200, 300),
            (0, 110),
            (110, 130),
            (350, 400),
            (300, 350),
        ] {
            a.add(s as u64, &stream[s..e], |t| done.push(t));
        }
        assert_eq!(done, vec![1002, 1000, 1001, 1003]);
        assert_eq!(a.completed, 4);
        assert_eq!(a.partial_records(), 0);
    }
}
