//! The send buffer: bytes written by the application and not yet cumulatively ACKed.
//!
//! Bytes live in one contiguous `Vec` (a consumed prefix is compacted away once it is
//! at least half the allocation, so each byte is moved at most once on average); any
//! `(offset, len)` range of buffered data is a plain slice, which is what lets a
//! segment be built over an arbitrary range of the stream.
//!
//! Hooks, designed in now so they need no rewrite later:
//! - (a) prioritised send: not-yet-sent data is also described by a queue of write
//!   records `(offset, len, priority)`. Today records are consumed in order; a
//!   prioritised sender reorders *unsent* records (never splitting one) and maps each to
//!   its own sequence range at first transmission. Because segment building already
//!   takes an explicit `(offset, len)` range (see `Connection::build_data_segment` in
//!   `output.rs`), only the "which range next" choice changes.
//! - (b) RDB: a segment may carry already-sent, unACKed bytes in front of new data.
//!   Segments are built from a `(start_seq, len)` range over this buffer, so bundling
//!   is a matter of choosing `start_seq < snd_nxt`; the scoreboard then records the new
//!   part as usual.
//! - (c) RC3: `Segment` carries `priority` and `dscp` per segment, and its `kind`
//!   distinguishes tracked sends from `SegmentKind::Redundant`, a copy that is emitted
//!   but neither entered in the scoreboard nor counted by CC.

use std::collections::VecDeque;

/// One application write that has not been fully sent yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteRecord {
    /// Stream offset of the first byte.
    pub offset: u64,
    pub len: u64,
    pub priority: u8,
}

#[derive(Debug)]
pub struct SendBuffer {
    data: Vec<u8>,
    /// `data[head..]` is live; `data[head]` is stream offset `base`.
    head: usize,
    base: u64,
    limit: usize,
    /// Unsent writes in send order (bounded: adjacent equal-priority writes merge).
    writes: VecDeque<WriteRecord>,
}

impl SendBuffer {
    pub fn new(limit: usize) -> Self {
        SendBuffer {
            data: Vec::new(),
            head: 0,
            base: 0,
            limit,
            writes: VecDeque::new(),
        }
    }

    /// Buffered bytes (unacknowledged and unsent).
    pub fn len(&self) -> usize {
        self.data.len() - self.head
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Stream offset one past the last written byte.
    pub fn end(&self) -> u64 {
        self.base + self.len() as u64
    }
    pub fn capacity(&self) -> usize {
        self.limit.saturating_sub(self.len())
    }

    /// Appends as much of `bytes` as fits; returns the count.
    pub fn write(&mut self, bytes: &[u8], priority: u8) -> usize {
        let n = bytes.len().min(self.capacity());
        if n == 0 {
            return 0;
        }
        let offset = self.end();
        self.data.extend_from_slice(&bytes[..n]);
        match self.writes.back_mut() {
            Some(w) if w.priority == priority && w.offset + w.len == offset => w.len += n as u64,
            _ => self.writes.push_back(WriteRecord {
                offset,
                len: n as u64,
                priority,
            }),
        }
        n
    }

    /// The bytes `[offset, offset + len)`; empty if not (fully) buffered.
    pub fn slice(&self, offset: u64, len: usize) -> &[u8] {
        let Some(rel) = offset.checked_sub(self.base) else {
            return &[];
        };
        let start = self.head.saturating_add(rel as usize);
        match start.checked_add(len) {
            Some(end) if end <= self.data.len() => &self.data[start..end],
            _ => &[],
        }
    }

    /// Drops bytes before stream offset `offset` (they were cumulatively ACKed).
    pub fn ack_to(&mut self, offset: u64) {
        if offset <= self.base {
            return;
        }
        let n = ((offset - self.base) as usize).min(self.len());
        self.head += n;
        self.base += n as u64;
        if self.head == self.data.len() {
            self.data.clear();
            self.head = 0;
        } else if self.head >= 4096 && self.head * 2 >= self.data.len() {
            self.data.drain(..self.head);
            self.head = 0;
        }
    }

    /// Marks `[.., offset)` as sent: consumes write records up to `offset`.
    pub fn mark_sent(&mut self, offset: u64) {
        while let Some(w) = self.writes.front_mut() {
            let end = w.offset + w.len;
            if end <= offset {
                self.writes.pop_front();
            } else {
                if w.offset < offset {
                    w.len = end - offset;
                    w.offset = offset;
                }
                break;
            }
        }
    }

    /// The next unsent write, if any.
    pub fn next_write(&self) -> Option<&WriteRecord> {
        self.writes.front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_bounded_and_sliced_by_stream_offset() {
        let mut b = SendBuffer::new(10);
        assert_eq!(b.write(b"hello world", 0), 10);
        assert_eq!(b.write(b"x", 0), 0);
        assert_eq!(b.slice(6, 4), b"worl");
        b.ack_to(6);
        assert_eq!(b.capacity(), 6);
        assert_eq!(b.slice(6, 4), b"worl");
        assert_eq!(b.slice(0, 1), b"");
        assert_eq!(b.slice(8, 5), b"");
    }

    #[test]
    fn write_records_merge_and_are_consumed_by_sends() {
        let mut b = SendBuffer::new(100);
        b.write(b"aaaa", 0);
        b.write(b"bbbb", 0);
        b.write(b"cc", 7);
        assert_eq!(
            b.next_write(),
            Some(&WriteRecord {
                offset: 0,
                len: 8,
                priority: 0
            })
        );
        b.mark_sent(5);
        assert_eq!(b.next_write().map(|w| (w.offset, w.len)), Some((5, 3)));
        b.mark_sent(8);
        assert_eq!(b.next_write().map(|w| w.priority), Some(7));
    }

    #[test]
    fn compaction_keeps_offsets_stable() {
        let mut b = SendBuffer::new(1 << 20);
        let data: Vec<u8> = (0..20_000u32).map(|i| i as u8).collect();
        b.write(&data, 0);
        b.ack_to(15_000);
        assert_eq!(b.slice(15_000, 3), &data[15_000..15_003]);
        b.write(&data[..10], 0);
        assert_eq!(b.slice(20_000, 10), &data[..10]);
    }
}
