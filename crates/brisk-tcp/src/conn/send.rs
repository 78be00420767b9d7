//! The send buffer: bytes written by the application and not yet cumulatively ACKed.
//!
//! Bytes live in one contiguous `Vec` (a consumed prefix is compacted away once it is
//! at least half the allocation, so each byte is moved at most once on average); any
//! `(offset, len)` range of buffered data is a plain slice, which is what lets a
//! segment be built over an arbitrary range of the stream.
//!
//! Hooks, designed in now so they need no rewrite later:
//! - (a) prioritised send (uTCP `SO_UNORDEREDSEND`, Minion NSDI 2012 §4.2): not-yet-sent
//!   data is also described by a queue of write records `(offset, len, priority)`.
//!   [`SendBuffer::write_prioritised`] places a write ahead of every *wholly unsent*
//!   write of lower priority by moving those bytes up in the buffer: sequence numbers
//!   are bound to bytes only when they are first sent, so reordering the unsent tail
//!   keeps SACK, retransmission and RDB (all over sent bytes) consistent. A write is
//!   never split, and nothing goes ahead of a write that is sent or partly sent. In
//!   this mode each write keeps its own record (so a later urgent write can pass
//!   every unsent one), bounded by [`MAX_WRITE_RECORDS`].
//! - (b) RDB: a segment may carry already-sent, unACKed bytes in front of new data.
//!   Segments are built from a `(start_seq, len)` range over this buffer, so bundling
//!   is a matter of choosing `start_seq < snd_nxt`; the scoreboard then records the new
//!   part as usual.
//! - (c) RC3: `Segment` carries `priority` and `dscp` per segment, and its `kind`
//!   distinguishes tracked sends from `SegmentKind::Redundant`, a copy that is emitted
//!   but neither entered in the scoreboard nor counted by CC.

use std::collections::VecDeque;

/// Most unsent write records a prioritised sender keeps (one per write; about 1.5 MB at
/// 24 B each). A write beyond it is refused until sends drain the queue, as one beyond
/// the byte limit is.
pub const MAX_WRITE_RECORDS: usize = 65_536;

/// One application write that has not been fully sent yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteRecord {
    /// Stream offset of the first unsent byte.
    pub offset: u64,
    pub len: u64,
    pub priority: u8,
    /// Part of the write is sent: nothing may be placed ahead of the rest.
    pub started: bool,
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
                started: false,
            }),
        }
        n
    }

    /// A prioritised write: all of `bytes` or nothing (a write is never split, so a
    /// datagram framing such as uCOBS stays intact), placed ahead of every wholly
    /// unsent write of lower priority, behind those of equal or higher priority and
    /// behind a partly sent one. Returns the count taken (0 or `bytes.len()`).
    ///
    /// Cost: the bytes and records it passes are moved once (`Vec::splice`), so an
    /// urgent write costs what it overtakes; an ordinary one appends.
    pub fn write_prioritised(&mut self, bytes: &[u8], priority: u8) -> usize {
        let n = bytes.len();
        if n == 0 || n > self.capacity() || self.writes.len() >= MAX_WRITE_RECORDS {
            return 0;
        }
        // Walk back over the unsent lower-priority writes (the unsent queue is kept in
        // descending priority, so they are all at its back).
        let mut at = self.writes.len();
        while at > 0 {
            let w = &self.writes[at - 1];
            if w.started || w.priority >= priority {
                break;
            }
            at -= 1;
        }
        let offset = self.writes.get(at).map_or(self.end(), |w| w.offset);
        let pos = self.head + (offset - self.base) as usize;
        self.data.splice(pos..pos, bytes.iter().copied());
        for w in self.writes.range_mut(at..) {
            w.offset += n as u64;
        }
        self.writes.insert(
            at,
            WriteRecord {
                offset,
                len: n as u64,
                priority,
                started: false,
            },
        );
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
                    w.started = true;
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
                priority: 0,
                started: false,
            })
        );
        b.mark_sent(5);
        assert_eq!(b.next_write().map(|w| (w.offset, w.len)), Some((5, 3)));
        b.mark_sent(8);
        assert_eq!(b.next_write().map(|w| w.priority), Some(7));
    }

    /// The unsent bytes in send order, as (priority, text) per record.
    fn queue(b: &SendBuffer) -> Vec<(u8, String)> {
        b.writes
            .iter()
            .map(|w| {
                let t = b.slice(w.offset, w.len as usize);
                (w.priority, String::from_utf8_lossy(t).into_owned())
            })
            .collect()
    }

    #[test]
    fn an_urgent_write_passes_unsent_lower_priority_writes_only() {
        let mut b = SendBuffer::new(100);
        for (t, p) in [("aaaa", 0), ("bbbb", 0), ("cc", 5), ("dd", 0)] {
            assert_eq!(b.write_prioritised(t.as_bytes(), p), t.len());
        }
        // Each write keeps its record; "cc" went ahead of both unsent priority-0 ones.
        assert_eq!(
            queue(&b),
            [(5, "cc"), (0, "aaaa"), (0, "bbbb"), (0, "dd")].map(|(p, t)| (p, t.into()))
        );
        // Part of "cc" is sent: nothing goes ahead of its rest, but a priority-5 write
        // goes ahead of the priority-0 ones (behind equal priority: FIFO within a level).
        b.mark_sent(1);
        b.write_prioritised(b"ee", 5);
        b.write_prioritised(b"ff", 9);
        assert_eq!(
            queue(&b),
            [
                (5, "c"),
                (9, "ff"),
                (5, "ee"),
                (0, "aaaa"),
                (0, "bbbb"),
                (0, "dd")
            ]
            .map(|(p, t)| (p, t.into()))
        );
        // The stream as it will be sent: sent bytes never move.
        assert_eq!(b.slice(0, b.len()), b"ccffeeaaaabbbbdd");
        // Sent to the end of "ff": the rest queues on unchanged.
        b.mark_sent(4);
        assert_eq!(b.next_write().map(|w| (w.offset, w.priority)), Some((4, 5)));
    }

    #[test]
    fn prioritised_writes_are_whole_and_bounded() {
        let mut b = SendBuffer::new(10);
        assert_eq!(b.write_prioritised(b"0123456", 1), 7);
        // All or nothing: 4 bytes do not fit in the 3 left.
        assert_eq!(b.write_prioritised(b"abcd", 9), 0);
        assert_eq!(b.write_prioritised(b"abc", 9), 3);
        assert_eq!(b.slice(0, 10), b"abc0123456");
        assert_eq!(b.write_prioritised(b"", 3), 0);
        // The record table is bounded too.
        let mut b = SendBuffer::new(1 << 20);
        for _ in 0..MAX_WRITE_RECORDS {
            assert_eq!(b.write_prioritised(b"x", 0), 1);
        }
        assert_eq!(b.write_prioritised(b"x", 0), 0);
    }

    proptest::proptest! {
        /// Against a model: a list of whole writes in send order, of which a prefix of
        /// bytes is sent. Every write stays whole and contiguous, sent bytes never move,
        /// and the unsent writes after a partly sent one are in descending priority,
        /// FIFO within a priority.
        #[test]
        fn prioritised_writes_match_the_model(
            ops in proptest::collection::vec((0u8..4, 1usize..40, 0usize..60), 1..60)
        ) {
            let mut b = SendBuffer::new(4096);
            // (id, priority, bytes) in send order; `sent` bytes of it are on the wire.
            let mut model: Vec<(usize, u8, Vec<u8>)> = Vec::new();
            let mut sent = 0usize;
            for (id, &(prio, len, send)) in ops.iter().enumerate() {
                let bytes: Vec<u8> = (0..len).map(|i| (id * 7 + i) as u8).collect();
                proptest::prop_assert_eq!(b.write_prioritised(&bytes, prio), len);
                // The model's placement: after every write that is partly or wholly
                // sent, or of equal or higher priority.
                let mut at = model.len();
                let mut start: usize = model.iter().map(|w| w.2.len()).sum();
                while at > 0 {
                    let w = &model[at - 1];
                    if start - w.2.len() < sent || w.1 >= prio {
                        break;
                    }
                    start -= w.2.len();
                    at -= 1;
                }
                model.insert(at, (id, prio, bytes));
                let total: usize = model.iter().map(|w| w.2.len()).sum();
                sent = (sent + send).min(total);
                b.mark_sent(sent as u64);
                let flat: Vec<u8> = model.iter().flat_map(|w| w.2.iter().copied()).collect();
                proptest::prop_assert_eq!(b.slice(0, b.len()), &flat[..]);
            }
        }
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
