//! The msTCP receiver (`ms_recvmsg()` of the thesis §6.2.3): one queue per stream it
//! has seen; chunks are delivered in stream order, each as soon as every earlier chunk
//! of its own stream has been, whatever other streams are waiting for. Over uCOBS on
//! uTCP with unordered receive a lost segment therefore delays only the streams whose
//! chunks it carried (Minion §8.5).
//!
//! Bounds ([`RecvLimits`]): streams open at once, chunk size, chunks held per stream
//! ahead of a gap, bytes held over all streams. What breaks a bound, or a stream's
//! own rules (a chunk whose message number or offset does not follow), ends that one
//! stream: its held chunks are freed, it is reported once as
//! [`MsEvent::Broken`], and its later chunks are dropped and counted. Other streams
//! are untouched. A datagram that is not a chunk at all is counted and dropped.

use super::header::{ChunkHeader, HEADER_LEN};
use super::{IdSet, MsError};
use crate::scan::{Datagram, Limits};
use crate::ucobs::UcobsReceiver;
use brisk_tcp::stream::ByteStream;
use std::collections::BTreeMap;
use std::io;

/// The receiver's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvLimits {
    /// Most streams open at once (1 to 65 536).
    pub max_streams: usize,
    /// Largest chunk payload accepted (1 to 65 519).
    pub max_chunk: usize,
    /// Most chunks held per stream ahead of its next expected one (1 to 32 767).
    pub max_reorder_chunks: usize,
    /// Most payload bytes held over all streams.
    pub max_held_bytes: usize,
}

impl Default for RecvLimits {
    fn default() -> Self {
        RecvLimits {
            max_streams: 1024,
            max_chunk: 16 << 10,
            max_reorder_chunks: 4096,
            max_held_bytes: 16 << 20,
        }
    }
}

impl RecvLimits {
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
            "max_reorder_chunks",
            self.max_reorder_chunks,
            1,
            32_767,
            "1 to 32767",
        )?;
        super::check_limit(
            "max_held_bytes",
            self.max_held_bytes,
            1,
            1 << 30,
            "1 to 1 GiB",
        )
    }
}

/// One chunk delivered in its stream's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsChunk<'a> {
    pub stream: u16,
    pub msg_id: u32,
    /// Offset of `data` within its message.
    pub offset: u32,
    pub end_of_msg: bool,
    pub end_of_stream: bool,
    pub data: &'a [u8],
}

/// Why a stream was ended by the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakReason {
    /// A new stream while `max_streams` were open.
    TooManyStreams,
    /// A chunk further ahead than `max_reorder_chunks`.
    ReorderWindow,
    /// Holding the chunk would pass `max_held_bytes`.
    HeldBytes,
    /// A payload longer than `max_chunk`.
    ChunkTooLong,
    /// A chunk's message number or offset does not follow the previous chunk's.
    Inconsistent,
}

/// What the receiver reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsEvent<'a> {
    Chunk(MsChunk<'a>),
    /// The stream is ended without its remaining data (once per stream).
    Broken {
        stream: u16,
        reason: BreakReason,
    },
}

/// What the receiver has seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecvCounters {
    /// Chunks delivered (each once, in stream order).
    pub chunks: u64,
    pub payload_bytes: u64,
    /// Of the delivered chunks, those that waited for an earlier chunk of their stream.
    pub held: u64,
    /// Datagrams that are not chunks (bad header).
    pub malformed: u64,
    /// Chunks for a stream that has ended or was broken.
    pub closed_stream: u64,
    /// Chunks with a sequence number already passed or already held.
    pub duplicates: u64,
    /// Streams broken by the receiver.
    pub broken_streams: u64,
    /// Streams that ended normally.
    pub ended_streams: u64,
}

#[derive(Debug, Default)]
struct RxStream {
    next_seq: u16,
    msg_id: u32,
    msg_off: u32,
    /// Chunks ahead of `next_seq`, by sequence number.
    held: BTreeMap<u16, (ChunkHeader, Vec<u8>)>,
    held_bytes: usize,
}

/// The demultiplexer: chunks in (any order), chunks out (per-stream order). Sans-IO;
/// [`MsReceiver`] puts it over a byte stream.
#[derive(Debug)]
pub struct Demux {
    limits: RecvLimits,
    streams: BTreeMap<u16, RxStream>,
    /// Streams ended or broken: their identifiers are not reused in a session.
    closed: IdSet,
    held_bytes: usize,
    /// Payload buffers of delivered held chunks, kept for reuse (at most
    /// `max_reorder_chunks`), so holding a chunk seldom allocates.
    spare: Vec<Vec<u8>>,
    counters: RecvCounters,
}

impl Demux {
    pub fn new(limits: RecvLimits) -> Result<Self, MsError> {
        limits.check()?;
        Ok(Demux {
            limits,
            streams: BTreeMap::new(),
            closed: IdSet::default(),
            held_bytes: 0,
            spare: Vec::new(),
            counters: RecvCounters::default(),
        })
    }

    pub fn counters(&self) -> &RecvCounters {
        &self.counters
    }

    /// Streams open (seen, not ended).
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// Payload bytes held ahead of gaps.
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// One uCOBS datagram: a chunk, delivered now or held for its turn.
    pub fn push(&mut self, d: &[u8], deliver: &mut dyn FnMut(MsEvent<'_>)) {
        let (h, payload) = match ChunkHeader::decode(d) {
            Ok(x) => x,
            Err(_) => {
                self.counters.malformed += 1;
                return;
            }
        };
        let id = h.stream;
        if self.closed.contains(id) {
            self.counters.closed_stream += 1;
            return;
        }
        if payload.len() > self.limits.max_chunk {
            self.break_stream(id, BreakReason::ChunkTooLong, deliver);
            return;
        }
        if !self.streams.contains_key(&id) {
            if self.streams.len() >= self.limits.max_streams {
                self.break_stream(id, BreakReason::TooManyStreams, deliver);
                return;
            }
            self.streams.insert(id, RxStream::default());
        }
        // NOTE(unwrap): present or just inserted.
        let st = self.streams.get_mut(&id).unwrap();
        let ahead = h.seq.wrapping_sub(st.next_seq);
        if ahead == 0 {
            self.deliver_run(id, h, payload, deliver);
            return;
        }
        if ahead >= 0x8000 || st.held.contains_key(&h.seq) {
            // Behind the stream's next chunk, or held already: a repeat.
            self.counters.duplicates += 1;
            return;
        }
        if usize::from(ahead) > self.limits.max_reorder_chunks {
            self.break_stream(id, BreakReason::ReorderWindow, deliver);
            return;
        }
        if self.held_bytes + payload.len() > self.limits.max_held_bytes {
            self.break_stream(id, BreakReason::HeldBytes, deliver);
            return;
        }
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(payload);
        st.held_bytes += payload.len();
        self.held_bytes += payload.len();
        st.held.insert(h.seq, (h, buf));
    }

    /// Delivers the stream's next chunk and every held chunk that follows it.
    fn deliver_run(
        &mut self,
        id: u16,
        h: ChunkHeader,
        payload: &[u8],
        deliver: &mut dyn FnMut(MsEvent<'_>),
    ) {
        if !self.deliver_one(id, h, payload, false, deliver) {
            return;
        }
        loop {
            let Some(st) = self.streams.get_mut(&id) else {
                return;
            };
            let Some((h, buf)) = st.held.remove(&st.next_seq) else {
                return;
            };
            st.held_bytes -= buf.len();
            self.held_bytes -= buf.len();
            let ok = self.deliver_one(id, h, &buf, true, deliver);
            if self.spare.len() < self.limits.max_reorder_chunks {
                self.spare.push(buf);
            }
            if !ok {
                return;
            }
        }
    }

    /// Delivers one chunk that is its stream's next; false if the stream ended or broke.
    fn deliver_one(
        &mut self,
        id: u16,
        h: ChunkHeader,
        payload: &[u8],
        was_held: bool,
        deliver: &mut dyn FnMut(MsEvent<'_>),
    ) -> bool {
        // NOTE(unwrap): callers hold a present stream.
        let st = self.streams.get_mut(&id).unwrap();
        let next_off = st.msg_off.checked_add(u32::from(h.len));
        let (true, Some(next_off)) = (
            h.msg_id == st.msg_id && h.msg_offset == st.msg_off,
            next_off,
        ) else {
            self.break_stream(id, BreakReason::Inconsistent, deliver);
            return false;
        };
        st.next_seq = st.next_seq.wrapping_add(1);
        if h.end_of_msg() {
            st.msg_id = st.msg_id.wrapping_add(1);
            st.msg_off = 0;
        } else {
            st.msg_off = next_off;
        }
        self.counters.chunks += 1;
        self.counters.payload_bytes += payload.len() as u64;
        self.counters.held += u64::from(was_held);
        deliver(MsEvent::Chunk(MsChunk {
            stream: id,
            msg_id: h.msg_id,
            offset: h.msg_offset,
            end_of_msg: h.end_of_msg(),
            end_of_stream: h.end_of_stream(),
            data: payload,
        }));
        if h.end_of_stream() {
            self.forget(id);
            self.counters.ended_streams += 1;
            return false;
        }
        true
    }

    fn forget(&mut self, id: u16) {
        if let Some(st) = self.streams.remove(&id) {
            self.held_bytes -= st.held_bytes;
            for (_, (_, buf)) in st.held {
                if self.spare.len() < self.limits.max_reorder_chunks {
                    self.spare.push(buf);
                }
            }
        }
        self.closed.insert(id);
    }

    fn break_stream(&mut self, id: u16, reason: BreakReason, deliver: &mut dyn FnMut(MsEvent<'_>)) {
        self.forget(id);
        self.counters.broken_streams += 1;
        deliver(MsEvent::Broken { stream: id, reason });
    }
}

/// msTCP over uCOBS over a byte stream: reads with the uCOBS receiver (unordered where
/// the stream supports it) and demultiplexes the chunks.
#[derive(Debug)]
pub struct MsReceiver {
    ucobs: UcobsReceiver,
    demux: Demux,
}

impl MsReceiver {
    /// `read_size`: bytes asked for per read (1 to 1 MiB).
    pub fn new(limits: RecvLimits, read_size: usize) -> Result<Self, MsError> {
        let demux = Demux::new(limits)?;
        let scan = Limits {
            max_datagram: HEADER_LEN + limits.max_chunk,
            ..Limits::default()
        };
        let ucobs = UcobsReceiver::new(scan, read_size).map_err(MsError::Scan)?;
        Ok(MsReceiver { ucobs, demux })
    }

    pub fn counters(&self) -> &RecvCounters {
        self.demux.counters()
    }

    /// The uCOBS layer's counters (records delivered out of order, malformed, ...).
    pub fn ucobs_counters(&self) -> &crate::scan::ScanCounters {
        self.ucobs.counters()
    }

    pub fn demux(&self) -> &Demux {
        &self.demux
    }

    /// Reads everything the stream has now and reports every chunk and broken stream.
    pub fn poll<S: ByteStream + ?Sized>(
        &mut self,
        s: &mut S,
        deliver: &mut dyn FnMut(MsEvent<'_>),
    ) -> io::Result<usize> {
        let demux = &mut self.demux;
        self.ucobs
            .poll(s, &mut |d: Datagram<'_>| demux.push(d.data, deliver))
    }
}
