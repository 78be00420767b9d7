//! The msTCP sender (`ms_sendmsg()` of the thesis §6.2.3): messages are queued per
//! stream, cut into chunks of at most `max_chunk` payload bytes, and written as uCOBS
//! records, one chunk each, **round-robin over the streams with data** (one chunk per
//! stream per turn). The interleaving is what lets every object of a page start
//! arriving early (Minion §8.5); it is the spec's resolution, the paper says only that
//! the design "follows standard techniques".
//!
//! Bounds: open streams, queued bytes, chunk size. A stream ends with its
//! `end_stream` message; its identifier is never used again in the session (a late
//! chunk of the old stream could otherwise be taken for the new one), which costs an
//! 8 KiB bitmap.

use super::header::{ChunkHeader, END_OF_MSG, END_OF_STREAM, HEADER_LEN};
use super::{IdSet, MsError};
use crate::ucobs::UcobsSender;
use brisk_tcp::stream::ByteStream;
use std::collections::{BTreeMap, VecDeque};
use std::io;

/// The sender's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendLimits {
    /// Most streams open at once (1 to 65 536).
    pub max_streams: usize,
    /// Largest chunk payload (1 to 65 519). The default, 1400 B, makes a COBS-encoded
    /// chunk with its header and two markers fit one 1448-byte segment.
    pub max_chunk: usize,
    /// Most message bytes queued and not yet cut into written chunks.
    pub max_queued_bytes: usize,
}

impl Default for SendLimits {
    fn default() -> Self {
        SendLimits {
            max_streams: 1024,
            max_chunk: 1400,
            max_queued_bytes: 64 << 20,
        }
    }
}

impl SendLimits {
    pub fn check(&self) -> Result<(), MsError> {
        super::check_limit("max_streams", self.max_streams, 1, 65_536, "1 to 65536")?;
        super::check_limit(
            "max_chunk",
            self.max_chunk,
            1,
            usize::from(u16::MAX) - HEADER_LEN,
            "1 to 65519",
        )?;
        super::check_limit(
            "max_queued_bytes",
            self.max_queued_bytes,
            1,
            1 << 30,
            "1 to 1 GiB",
        )
    }
}

#[derive(Debug, Default)]
struct TxStream {
    seq: u16,
    msg_id: u32,
    /// Queued messages and whether each ends the stream; `off` is how much of the
    /// front one has been written.
    msgs: VecDeque<(Vec<u8>, bool)>,
    off: usize,
    /// The end-of-stream message is queued: nothing more may be sent.
    ending: bool,
}

/// What the sender has done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendCounters {
    pub messages: u64,
    pub chunks: u64,
    pub payload_bytes: u64,
}

/// Writes messages on streams as msTCP chunks over uCOBS.
#[derive(Debug)]
pub struct MsSender {
    limits: SendLimits,
    streams: BTreeMap<u16, TxStream>,
    /// Streams with queued data, in round-robin order.
    ring: VecDeque<u16>,
    closed: IdSet,
    queued: usize,
    ucobs: UcobsSender,
    /// A chunk's record was taken in part; the rest is still to write.
    partial: bool,
    chunk: Vec<u8>,
    counters: SendCounters,
}

impl MsSender {
    pub fn new(limits: SendLimits) -> Result<Self, MsError> {
        limits.check()?;
        Ok(MsSender {
            limits,
            streams: BTreeMap::new(),
            ring: VecDeque::new(),
            closed: IdSet::default(),
            queued: 0,
            ucobs: UcobsSender::new(),
            partial: false,
            chunk: Vec::with_capacity(HEADER_LEN + limits.max_chunk),
            counters: SendCounters::default(),
        })
    }

    pub fn counters(&self) -> &SendCounters {
        &self.counters
    }

    /// uCOBS record bytes the stream has taken.
    pub fn wire_bytes(&self) -> u64 {
        self.ucobs.bytes
    }

    /// Message bytes queued and not yet written.
    pub fn queued_bytes(&self) -> usize {
        self.queued
    }

    /// Nothing is queued or partly written.
    pub fn idle(&self) -> bool {
        self.ring.is_empty() && !self.partial
    }

    /// Queues `msg` on `stream` (`ms_sendmsg`); with `end_stream` it is the stream's
    /// last. Nothing is written until [`poll_write`](Self::poll_write).
    pub fn send(&mut self, stream: u16, msg: &[u8], end_stream: bool) -> Result<(), MsError> {
        if self.closed.contains(stream) {
            return Err(MsError::StreamClosed(stream));
        }
        if msg.len() > u32::MAX as usize {
            return Err(MsError::MessageTooLong(msg.len()));
        }
        if self.queued + msg.len() > self.limits.max_queued_bytes {
            return Err(MsError::QueueFull {
                queued: self.queued,
                max: self.limits.max_queued_bytes,
            });
        }
        if !self.streams.contains_key(&stream) && self.streams.len() >= self.limits.max_streams {
            return Err(MsError::TooManyStreams(self.limits.max_streams));
        }
        let st = self.streams.entry(stream).or_default();
        if st.ending {
            return Err(MsError::StreamClosed(stream));
        }
        if st.msgs.is_empty() {
            self.ring.push_back(stream);
        }
        st.msgs.push_back((msg.to_vec(), end_stream));
        st.ending = end_stream;
        self.queued += msg.len();
        self.counters.messages += 1;
        Ok(())
    }

    /// Writes chunks, round-robin over the streams with data, while the byte stream
    /// takes them. Returns the chunks written by this call.
    pub fn poll_write<S: ByteStream + ?Sized>(&mut self, s: &mut S) -> io::Result<u64> {
        let mut n = 0;
        self.partial = !self.ucobs.flush(s)?;
        if self.partial {
            return Ok(0);
        }
        while let Some(&id) = self.ring.front() {
            let Some(st) = self.streams.get_mut(&id) else {
                self.ring.pop_front();
                continue;
            };
            let Some((msg, end_stream)) = st.msgs.front() else {
                self.ring.pop_front();
                continue;
            };
            let take = (msg.len() - st.off).min(self.limits.max_chunk);
            let last = st.off + take == msg.len();
            let mut flags = 0;
            if last {
                flags |= END_OF_MSG;
                if *end_stream {
                    flags |= END_OF_STREAM;
                }
            }
            let h = ChunkHeader {
                stream: id,
                seq: st.seq,
                flags,
                len: take as u16,
                msg_id: st.msg_id,
                msg_offset: st.off as u32,
            };
            self.chunk.clear();
            self.chunk.extend_from_slice(&h.encode());
            self.chunk.extend_from_slice(&msg[st.off..st.off + take]);
            if !self.ucobs.send(s, &self.chunk, 0)? {
                break;
            }
            n += 1;
            self.counters.chunks += 1;
            self.counters.payload_bytes += take as u64;
            self.queued -= take;
            st.seq = st.seq.wrapping_add(1);
            st.off += take;
            self.ring.pop_front();
            if last {
                let ended = *end_stream;
                st.msgs.pop_front();
                st.off = 0;
                st.msg_id = st.msg_id.wrapping_add(1);
                if ended {
                    self.streams.remove(&id);
                    self.closed.insert(id);
                    continue;
                }
            }
            if !st.msgs.is_empty() {
                self.ring.push_back(id);
            }
        }
        self.partial = !self.ucobs.flush(s)?;
        Ok(n)
    }
}
