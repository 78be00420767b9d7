//! The in-order records parser: headers checked, bodies passed through, one callback
//! per completed record.

use super::{RecordHeader, HEADER_LEN};

/// Parses fixed-size records out of a byte stream read in arbitrary pieces.
///
/// A header is bad (counted, not fatal) when its magic, index or length is not the
/// expected one; framing continues by the configured size either way, as a receiver
/// that trusts its own configuration would.
#[derive(Clone, Debug)]
pub struct RecordReader {
    size: u64,
    header: [u8; HEADER_LEN],
    have: usize,
    body_left: u64,
    expect_index: u64,
    sent_at_ns: u64,
    bad_headers: u64,
}

impl RecordReader {
    /// Records of `size` bytes; sizes below [`HEADER_LEN`] are taken as header-only.
    pub fn new(size: u64) -> RecordReader {
        RecordReader {
            size: size.max(HEADER_LEN as u64),
            header: [0; HEADER_LEN],
            have: 0,
            body_left: 0,
            expect_index: 0,
            sent_at_ns: 0,
            bad_headers: 0,
        }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Headers that did not match (magic, index or length).
    pub fn bad_headers(&self) -> u64 {
        self.bad_headers
    }

    /// Records completed so far.
    pub fn completed(&self) -> u64 {
        self.expect_index
    }

    /// Consumes the next `data` of the stream. `body(i, bytes)` sees every body byte
    /// (`i` is the index of `bytes[0]` in `data`); `done(sent_at_ns)` is called once per
    /// record whose last byte is in `data`.
    pub fn feed(
        &mut self,
        data: &[u8],
        mut body: impl FnMut(usize, &[u8]),
        mut done: impl FnMut(u64),
    ) {
        let mut i = 0;
        while i < data.len() {
            if self.have < HEADER_LEN {
                let n = (HEADER_LEN - self.have).min(data.len() - i);
                self.header[self.have..self.have + n].copy_from_slice(&data[i..i + n]);
                self.have += n;
                i += n;
                if self.have == HEADER_LEN {
                    self.parse_header();
                    if self.body_left == 0 {
                        self.finish(&mut done);
                    }
                }
            } else {
                let n = self.body_left.min((data.len() - i) as u64) as usize;
                body(i, &data[i..i + n]);
                i += n;
                self.body_left -= n as u64;
                if self.body_left == 0 {
                    self.finish(&mut done);
                }
            }
        }
    }

    /// [`feed`](Self::feed) for data read at `now_ns`, reporting each completed
    /// record's latency (`now - send time`, 0 if the clock disagrees).
    pub fn feed_at(
        &mut self,
        data: &[u8],
        now_ns: u64,
        body: impl FnMut(usize, &[u8]),
        mut latency: impl FnMut(u64),
    ) {
        self.feed(data, body, |sent| latency(now_ns.saturating_sub(sent)));
    }

    fn parse_header(&mut self) {
        let (h, magic_ok) = RecordHeader::decode(&self.header);
        if !magic_ok || h.index != self.expect_index || u64::from(h.len) != self.size {
            self.bad_headers += 1;
        }
        self.sent_at_ns = h.sent_at_ns;
        self.body_left = self.size - HEADER_LEN as u64;
    }

    fn finish(&mut self, done: &mut impl FnMut(u64)) {
        done(self.sent_at_ns);
        self.expect_index += 1;
        self.have = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::tests::record;
    use proptest::prelude::*;

    #[test]
    fn records_split_across_reads_give_one_latency_each() {
        let mut stream = Vec::new();
        for i in 0..5 {
            stream.extend(record(i, 1000 * i, 100));
        }
        let mut rx = RecordReader::new(100);
        let mut lat = Vec::new();
        let mut body = 0;
        // Odd-sized reads split headers and bodies alike.
        for (k, chunk) in stream.chunks(37).enumerate() {
            rx.feed_at(
                chunk,
                10_000 + k as u64,
                |_, b| body += b.len(),
                |l| lat.push(l),
            );
        }
        assert_eq!(rx.bad_headers(), 0);
        assert_eq!((rx.completed(), body), (5, 5 * 76));
        // Record 0 ends in read 2 (bytes 74..111), at 10_002, sent at 0.
        assert_eq!(lat[0], 10_002);
        assert!(lat.windows(2).all(|w| w[0] > w[1]), "{lat:?}");
    }

    #[test]
    fn wrong_index_magic_or_length_counts_as_a_bad_header() {
        let mut rx = RecordReader::new(30);
        let mut n = 0;
        rx.feed(&record(0, 0, 30), |_, _| {}, |_| n += 1);
        rx.feed(&record(5, 0, 30), |_, _| {}, |_| n += 1);
        let mut bad = record(2, 0, 30);
        bad[0] = b'X';
        rx.feed(&bad, |_, _| {}, |_| n += 1);
        let mut long = record(3, 0, 30);
        long[23] = 31;
        rx.feed(&long, |_, _| {}, |_| n += 1);
        assert_eq!((rx.bad_headers(), n), (3, 4));
    }

    #[test]
    fn header_only_and_undersized_records_complete_at_their_header() {
        let mut rx = RecordReader::new(3);
        assert_eq!(rx.size(), HEADER_LEN as u64);
        let mut sent = Vec::new();
        rx.feed(
            &record(0, 9, HEADER_LEN),
            |_, _| panic!("no body"),
            |s| sent.push(s),
        );
        assert_eq!((sent, rx.bad_headers()), (vec![9], 0));
    }

    proptest! {
        #[test]
        fn any_bytes_any_split_never_panic(
            data in proptest::collection::vec(any::<u8>(), 0..300),
            size in 0u64..80,
            cut in 0usize..300,
        ) {
            let mut rx = RecordReader::new(size);
            let (a, b) = data.split_at(cut.min(data.len()));
            let mut body = 0usize;
            rx.feed(a, |_, x| body += x.len(), |_| {});
            rx.feed(b, |_, x| body += x.len(), |_| {});
            prop_assert!(rx.completed() * rx.size() <= data.len() as u64);
            prop_assert!(body <= data.len());
        }
    }
}
