//! uCOBS over a byte stream (Minion NSDI 2012 §5; the paper's `cobs_sendmsg()` /
//! `cobs_recvmsg()`): datagrams in, datagrams out, over any
//! [`ByteStream`](brisk_tcp::stream::ByteStream).
//!
//! - The sender writes each record in one write, at the datagram's priority. Over
//!   brisk with prioritised send (`Config::unordered_send`) the write is taken whole
//!   and may overtake unsent lower-priority records; over any other stream a write may
//!   be taken in part, and the rest is finished before the next datagram, so the
//!   stream is always a sequence of whole records.
//! - The receiver reads with `read_unordered`: over brisk with unordered receive
//!   (`Config::unordered`) records are delivered as soon as their bytes arrive; over a
//!   stream without it (kernel TCP, brisk with the option off) it reads in order and
//!   delivers in stream order. Either way each datagram is delivered exactly once.

use crate::frame::{encode_record, FrameError};
use crate::scan::{Datagram, Limits, RecordScanner, ScanCounters, ScanError};
use brisk_tcp::stream::ByteStream;
use std::io;

/// Writes datagrams as uCOBS records.
#[derive(Debug, Default)]
pub struct UcobsSender {
    /// The record being written (`pending[done..]` is still to go).
    pending: Vec<u8>,
    done: usize,
    /// Datagrams accepted, and record bytes written.
    pub datagrams: u64,
    pub bytes: u64,
}

impl UcobsSender {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends `d` at `priority` (higher is more urgent). `Ok(true)`: accepted (written,
    /// or partly written and finished by later calls); `Ok(false)`: no room now, try
    /// again later (nothing of `d` was written).
    pub fn send<S: ByteStream + ?Sized>(
        &mut self,
        s: &mut S,
        d: &[u8],
        priority: u8,
    ) -> io::Result<bool> {
        if !self.flush(s)? {
            return Ok(false);
        }
        self.pending.clear();
        self.done = 0;
        encode_record(d, &mut self.pending).map_err(invalid)?;
        let n = s.write_with_priority(&self.pending, priority)?;
        if n == 0 {
            self.pending.clear();
            return Ok(false);
        }
        self.done = n;
        self.bytes += n as u64;
        self.datagrams += 1;
        Ok(true)
    }

    /// Finishes a partly written record. `Ok(true)`: nothing is pending.
    pub fn flush<S: ByteStream + ?Sized>(&mut self, s: &mut S) -> io::Result<bool> {
        while self.done < self.pending.len() {
            let n = s.write(&self.pending[self.done..])?;
            if n == 0 {
                return Ok(false);
            }
            self.done += n;
            self.bytes += n as u64;
        }
        Ok(true)
    }
}

fn invalid(e: FrameError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, e.to_string())
}

/// Reads uCOBS records from a stream and delivers their datagrams.
#[derive(Debug)]
pub struct UcobsReceiver {
    scan: RecordScanner,
    buf: Vec<u8>,
}

impl UcobsReceiver {
    /// `read_size`: bytes asked for per read (1 to 1 MiB).
    pub fn new(limits: Limits, read_size: usize) -> Result<Self, ScanError> {
        if !(1..=1 << 20).contains(&read_size) {
            return Err(ScanError::BadLimit {
                field: "read_size",
                value: read_size,
                range: "1 to 1 MiB",
            });
        }
        Ok(UcobsReceiver {
            scan: RecordScanner::new(limits)?,
            buf: vec![0; read_size],
        })
    }

    pub fn counters(&self) -> &ScanCounters {
        self.scan.counters()
    }

    /// Reads everything the stream has now and delivers each complete datagram once.
    /// Returns the number of reads. For a blocking stream this returns at end of
    /// stream; use [`poll_once`](Self::poll_once) to interleave. (`None` from
    /// `read_unordered` means "nothing now" for a non-blocking stream and the end for a
    /// blocking one; the caller knows which it has.)
    pub fn poll<S: ByteStream + ?Sized>(
        &mut self,
        s: &mut S,
        deliver: &mut dyn FnMut(Datagram<'_>),
    ) -> io::Result<usize> {
        let mut reads = 0;
        while self.poll_once(s, deliver)? {
            reads += 1;
        }
        Ok(reads)
    }

    /// One read; `Ok(false)` when there was nothing to read.
    pub fn poll_once<S: ByteStream + ?Sized>(
        &mut self,
        s: &mut S,
        deliver: &mut dyn FnMut(Datagram<'_>),
    ) -> io::Result<bool> {
        let Some(r) = s.read_unordered(&mut self.buf)? else {
            return Ok(false);
        };
        if r.len == 0 {
            return Ok(false);
        }
        let data = &self.buf[..r.len.min(self.buf.len())];
        if r.in_order {
            self.scan
                .push_in_order(r.offset, data, deliver)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        } else {
            self.scan.push_out_of_order(r.offset, data, deliver);
        }
        Ok(true)
    }
}
