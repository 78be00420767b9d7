//! The data level of a connection (the MPTCP "data stream", RFC 8684 §2; Linux's
//! `mptcp_sock` side of `net/mptcp/protocol.c`): the application's send buffer
//! with prioritised writes and record ends, the receive buffer with unordered reads
//! and pruning, FIN and writability, and the events the application polls. It knows
//! stream offsets only; how its bytes travel, in which sequence space and with which
//! loss recovery, is the subflow's (`super::subflow`).

use super::recv::RecvBuffer;
use super::send::SendBuffer;
use crate::event::Event;
use std::collections::VecDeque;

/// Maximum queued application events (they coalesce; this is a safety bound).
const EVENT_LIMIT: usize = 64;

/// Most record ends a connection holds (one per `end_record`); beyond it a
/// mark is refused and later writes may share segments with the record.
pub const MAX_RECORD_MARKS: usize = 4_096;

#[derive(Debug)]
pub(super) struct Stream {
    // --- send half ---
    pub sendbuf: SendBuffer,
    /// The application has no more to write: a FIN follows the buffer's end.
    pub fin_queued: bool,
    /// A write was refused for lack of space: report `Writable` when space frees.
    pub writable_wanted: bool,
    /// Ends of records (`Connection::end_record`, Linux `MSG_EOR`) not yet
    /// acknowledged, as stream offsets in order: no new segment spans one, and a
    /// segment ending at one carries PSH. At most [`MAX_RECORD_MARKS`].
    pub record_ends: VecDeque<u64>,
    /// The highest record end asked for when everything before it was already sent
    /// (`end_record` then marks nothing for segmentation): RDB still may not bundle
    /// back across it (`bytes_since_record_end`).
    pub sent_record_end: u64,
    // --- receive half ---
    pub recvbuf: RecvBuffer,
    pub fin_received: bool,
    /// Stream offset of the peer's FIN once seen (possibly ahead of a hole).
    pub peer_fin: Option<u64>,
    // --- to the application ---
    pub events: VecDeque<Event>,
}

impl Stream {
    pub fn new(send_buffer: usize, recv_buffer: usize, max_ooo_segments: usize) -> Self {
        Stream {
            sendbuf: SendBuffer::new(send_buffer),
            fin_queued: false,
            writable_wanted: false,
            record_ends: VecDeque::new(),
            sent_record_end: 0,
            recvbuf: RecvBuffer::new(recv_buffer, max_ooo_segments),
            fin_received: false,
            peer_fin: None,
            events: VecDeque::new(),
        }
    }

    /// Queues an event for the application; equal events coalesce (except `Closed`).
    pub fn push_event(&mut self, ev: Event) {
        if self.events.contains(&ev) && !matches!(ev, Event::Closed(_)) {
            return;
        }
        if self.events.len() < EVENT_LIMIT {
            self.events.push_back(ev);
        }
    }

    /// Free space in the send buffer for the application (none once FIN is queued).
    pub fn send_capacity(&self) -> usize {
        if self.fin_queued {
            0
        } else {
            self.sendbuf.capacity()
        }
    }

    /// After an ACK freed send-buffer space: `Writable` if a write was refused.
    pub fn on_space_freed(&mut self) {
        if self.writable_wanted && self.sendbuf.capacity() > 0 && !self.fin_queued {
            self.writable_wanted = false;
            self.push_event(Event::Writable);
        }
    }

    /// Marks a record end at the buffer's end (`Connection::end_record`); `next` is the
    /// stream offset of the next byte not yet sent. False when there is nothing unsent
    /// to mark or the marks are at their limit.
    pub fn end_record(&mut self, next: u64) -> bool {
        let end = self.sendbuf.end();
        if end <= next {
            self.sent_record_end = self.sent_record_end.max(end);
            return false;
        }
        if self.record_ends.back().is_some_and(|&e| e >= end) {
            return false;
        }
        if self.record_ends.len() >= MAX_RECORD_MARKS {
            return false;
        }
        self.record_ends.push_back(end);
        true
    }

    /// Bytes from the last record end at or before stream offset `next` up to `next`
    /// (u64::MAX: none held). Marks already acknowledged may still be held; they lie
    /// at or below SND.UNA and so never limit a bundle of unacknowledged bytes.
    pub fn bytes_since_record_end(&self, next: u64) -> u64 {
        let i = self.record_ends.partition_point(|&e| e <= next);
        let marked = i.checked_sub(1).map(|j| self.record_ends[j]);
        let sent = (self.sent_record_end > 0 && self.sent_record_end <= next)
            .then_some(self.sent_record_end);
        marked.max(sent).map_or(u64::MAX, |e| next - e)
    }

    /// Bytes from stream offset `next` to the next record end ahead (u64::MAX: none);
    /// marks at or below `acked` (the stream offset SND.UNA stands for) are dropped
    /// first. Marks stay until acknowledged: a retransmission ending at one keeps its
    /// PSH.
    pub fn bytes_to_record_end(&mut self, next: u64, acked: u64) -> u64 {
        while self.record_ends.front().is_some_and(|&e| e <= acked) {
            self.record_ends.pop_front();
        }
        let ahead = self.record_ends.partition_point(|&e| e <= next);
        self.record_ends.get(ahead).map_or(u64::MAX, |&e| e - next)
    }
}
