//! uTCP's socket-level formats as the Minion prototype had them (NSDI 2012 §7; spec
//! `minion.md` §9 A1, A12 and the note on exact formats; worked example W-4), for
//! tests and for ports of code written against that API.
//!
//! - With `SO_UNORDERED`, each `read()` returned a **5-byte header** before the data:
//!   `[flags u8][offset u32 BE]`. Bit 0 of the flags marks out-of-order data (the
//!   paper leaves the bit unnamed; bit 0 is the spec's resolution). The offset is the
//!   byte's place in the stream (sequence − ISN − 1) modulo 2^32; the reader unwraps
//!   it relative to the in-order point it has seen ([`ReadHeader::unwrap_offset`]).
//! - With `SO_UNORDEREDSEND`, each `write()` started with a **5-byte header**
//!   `[flags u8][tag u32 BE]`: the tag is the priority (higher is more urgent), the
//!   flags unused. The header is not counted in the bytes a write returns (A12).
//!
//! brisk's own API carries the same information as arguments and fields
//! (`write_with_priority`, [`UnorderedRead`]); these functions translate. brisk's
//! priorities are 8-bit, so a tag above 255 saturates at 255 (the order of tags up to
//! 255 is kept; the paper's evaluation used two).

use std::io;

use brisk_tcp::stream::ByteStream;
use brisk_tcp::UnorderedRead;

/// Length of both headers.
pub const HEADER_LEN: usize = 5;
/// Read-header flag: the data was read out of order (ahead of a hole).
pub const FLAG_OOO: u8 = 0x01;

/// The header `read()` put before each run of data under `SO_UNORDERED`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadHeader {
    pub out_of_order: bool,
    /// Stream offset modulo 2^32.
    pub offset: u32,
}

impl ReadHeader {
    pub fn of(r: &UnorderedRead) -> Self {
        ReadHeader {
            out_of_order: !r.in_order,
            // The paper's field is 32 bits: the offset modulo 2^32 (spec A1).
            offset: r.offset as u32,
        }
    }

    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let o = self.offset.to_be_bytes();
        let flags = if self.out_of_order { FLAG_OOO } else { 0 };
        [flags, o[0], o[1], o[2], o[3]]
    }

    /// `None` for fewer than five bytes or flag bits the format does not define.
    pub fn decode(b: &[u8]) -> Option<Self> {
        let h: &[u8; HEADER_LEN] = b.get(..HEADER_LEN)?.try_into().ok()?;
        if h[0] & !FLAG_OOO != 0 {
            return None;
        }
        Some(ReadHeader {
            out_of_order: h[0] & FLAG_OOO != 0,
            offset: u32::from_be_bytes([h[1], h[2], h[3], h[4]]),
        })
    }

    /// The full 64-bit offset: the value congruent to `offset` mod 2^32 nearest to
    /// `in_order_point` (the reader's next in-order byte). Data is never more than
    /// the receive window (< 2^30 bytes with window scaling) away from it, so the
    /// nearest value is the right one.
    pub fn unwrap_offset(&self, in_order_point: u64) -> u64 {
        let base = in_order_point & !0xffff_ffff;
        let candidates = [base.wrapping_sub(1 << 32), base, base.wrapping_add(1 << 32)];
        candidates
            .into_iter()
            .map(|b| b | u64::from(self.offset))
            .filter(|&c| c < u64::MAX - (1 << 32))
            .min_by_key(|&c| c.abs_diff(in_order_point))
            .unwrap_or(u64::from(self.offset))
    }
}

/// The header each `write()` began with under `SO_UNORDEREDSEND`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendHeader {
    pub flags: u8,
    pub tag: u32,
}

impl SendHeader {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let t = self.tag.to_be_bytes();
        [self.flags, t[0], t[1], t[2], t[3]]
    }

    /// `None` for fewer than five bytes.
    pub fn decode(b: &[u8]) -> Option<Self> {
        let h: &[u8; HEADER_LEN] = b.get(..HEADER_LEN)?.try_into().ok()?;
        Some(SendHeader {
            flags: h[0],
            tag: u32::from_be_bytes([h[1], h[2], h[3], h[4]]),
        })
    }

    /// brisk's 8-bit priority for this tag (saturating).
    pub fn priority(&self) -> u8 {
        self.tag.min(255) as u8
    }
}

/// The prototype's `read()` under `SO_UNORDERED`: one run of data, preceded in `buf`
/// by its [`ReadHeader`]. Returns the bytes written to `buf` (header included), or
/// `Ok(None)` when nothing is readable. `buf` must hold the header and one byte.
pub fn read_with_header<S: ByteStream + ?Sized>(
    s: &mut S,
    buf: &mut [u8],
) -> io::Result<Option<usize>> {
    if buf.len() <= HEADER_LEN {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("buffer of {} bytes: needs at least 6", buf.len()),
        ));
    }
    let (head, body) = buf.split_at_mut(HEADER_LEN);
    let Some(r) = s.read_unordered(body)? else {
        return Ok(None);
    };
    head.copy_from_slice(&ReadHeader::of(&r).encode());
    Ok(Some(HEADER_LEN + r.len))
}

/// The prototype's `write()` under `SO_UNORDEREDSEND`: `msg` begins with a
/// [`SendHeader`]; the rest is written whole at the tag's priority. Returns the data
/// bytes taken (the header is not counted, A12): all of them or none.
pub fn write_with_header<S: ByteStream + ?Sized>(s: &mut S, msg: &[u8]) -> io::Result<usize> {
    let Some(h) = SendHeader::decode(msg) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a write under SO_UNORDEREDSEND starts with a 5-byte header",
        ));
    };
    s.write_with_priority(&msg[HEADER_LEN..], h.priority())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_have_the_paper_layout() {
        let h = ReadHeader {
            out_of_order: true,
            offset: 0x0102_0304,
        };
        assert_eq!(h.encode(), [0x01, 0x01, 0x02, 0x03, 0x04]);
        assert_eq!(ReadHeader::decode(&h.encode()), Some(h));
        assert_eq!(
            ReadHeader::decode(&[0x02, 0, 0, 0, 0]),
            None,
            "undefined flag"
        );
        assert_eq!(ReadHeader::decode(&[0, 0, 0, 0]), None, "short");
        let s = SendHeader { flags: 0, tag: 7 };
        assert_eq!(s.encode(), [0, 0, 0, 0, 7]);
        assert_eq!(SendHeader::decode(&s.encode()), Some(s));
        assert_eq!(
            SendHeader {
                flags: 0,
                tag: 70_000
            }
            .priority(),
            255
        );
    }

    #[test]
    fn offsets_unwrap_near_the_in_order_point() {
        let h = |o: u32| ReadHeader {
            out_of_order: true,
            offset: o,
        };
        assert_eq!(h(100).unwrap_offset(0), 100);
        // Just past a 2^32 boundary, seen from just before it.
        let point = (1u64 << 32) - 1000;
        assert_eq!(h(500).unwrap_offset(point), (1 << 32) + 500);
        // A late in-order run just before the boundary, seen from just after it.
        assert_eq!(
            h(u32::MAX - 10).unwrap_offset((1 << 32) + 20),
            (1 << 32) - 11
        );
        assert_eq!(h(7).unwrap_offset(5 << 32), (5 << 32) + 7);
    }

    /// A stream that returns scripted unordered reads and records prioritised writes.
    struct Script {
        reads: Vec<(u64, Vec<u8>, bool)>,
        writes: Vec<(Vec<u8>, u8)>,
    }

    impl ByteStream for Script {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            self.write_with_priority(data, 0)
        }
        fn write_with_priority(&mut self, data: &[u8], priority: u8) -> io::Result<usize> {
            self.writes.push((data.to_vec(), priority));
            Ok(data.len())
        }
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Ok(0)
        }
        fn read_unordered(&mut self, buf: &mut [u8]) -> io::Result<Option<UnorderedRead>> {
            if self.reads.is_empty() {
                return Ok(None);
            }
            let (offset, data, in_order) = self.reads.remove(0);
            buf[..data.len()].copy_from_slice(&data);
            Ok(Some(UnorderedRead {
                offset,
                len: data.len(),
                in_order,
            }))
        }
        fn shutdown_write(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn w4_read_sequence_in_the_papers_format() {
        // W-4 / UT-4: segments 1, 3, 2 (100 bytes each) arrive in that order; uTCP's
        // reads are [IN, 1] [OOO, 3] [IN, 2] [IN, 3] (the last being segment 3 again,
        // in order).
        let seg = |k: u8| vec![k; 100];
        let mut s = Script {
            reads: vec![
                (0, seg(1), true),
                (200, seg(3), false),
                (100, seg(2), true),
                (200, seg(3), true),
            ],
            writes: Vec::new(),
        };
        let mut buf = [0u8; 256];
        let mut got = Vec::new();
        while let Some(n) = read_with_header(&mut s, &mut buf).unwrap() {
            let h = ReadHeader::decode(&buf[..n]).unwrap();
            got.push((h.out_of_order, h.offset, buf[HEADER_LEN], n - HEADER_LEN));
        }
        assert_eq!(
            got,
            [
                (false, 0, 1, 100),
                (true, 200, 3, 100),
                (false, 100, 2, 100),
                (false, 200, 3, 100)
            ]
        );
        assert!(read_with_header(&mut s, &mut [0u8; 5]).is_err());
    }

    #[test]
    fn a_headed_write_goes_whole_at_its_tags_priority() {
        let mut s = Script {
            reads: Vec::new(),
            writes: Vec::new(),
        };
        let mut msg = SendHeader { flags: 0, tag: 2 }.encode().to_vec();
        msg.extend_from_slice(b"urgent");
        assert_eq!(write_with_header(&mut s, &msg).unwrap(), 6);
        assert_eq!(s.writes, [(b"urgent".to_vec(), 2)]);
        assert!(write_with_header(&mut s, b"abc").is_err());
    }
}
