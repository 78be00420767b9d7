//! Finding uCOBS records in a stream that arrives in order and, with uTCP's unordered
//! receive, also out of order (Minion NSDI 2012 §5.3–5.4; thesis §4.3.3; spec
//! `minion.md` §3.4–3.5; claims MN-11, MN-12; the cobs_recvmsg() of the paper's C
//! library).
//!
//! A record is "two marker bytes surrounding a contiguous sequence of bytes containing
//! no markers or holes": here a maximal run of non-zero bytes with a zero (or the start
//! of the stream) before it and a zero after it, all received. Records are named by the
//! stream offset of their first encoded byte.
//!
//! - **In order**, the scanner walks the stream once, keeping only the current record's
//!   bytes (bounded by the datagram limit).
//! - **Out of order**, bytes beyond the in-order point are kept in a window addressed
//!   by offset (`crate::window`, shared with uTLS's receiver). After each arrival only
//!   the held run around the new bytes is searched, from the last marker before them
//!   to the first after them, so an arrival costs its own length plus at most one
//!   record on each side, and nothing is allocated once the window has grown.
//! - **Exactly once.** uTCP hands bytes out of order at most once and always again in
//!   order (at-least-once), so the start of every record handled out of order is kept
//!   in `handled` until the in-order walk reaches it and skips it. Malformed or
//!   oversized records are handled (counted) once too.
//!
//! Bounds ([`Limits`]): the datagram size, the out-of-order window's bytes and its
//! number of held runs. Out-of-order bytes beyond them are refused and counted; they
//! come again in order, so nothing is lost, only delivered later.

use crate::frame::{decode_body, max_encoded_len, FrameError};
use crate::window::{Keep, OooWindow};
use std::collections::BTreeSet;
use thiserror::Error;

/// The receiver's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest datagram delivered (1 to [`crate::frame::MAX_DATAGRAM`]); a longer
    /// record is counted as oversized and skipped.
    pub max_datagram: usize,
    /// Most bytes held beyond the in-order point (the out-of-order window).
    pub max_ooo_bytes: usize,
    /// Most separate runs held beyond the in-order point.
    pub max_ooo_runs: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_datagram: 65_536,
            max_ooo_bytes: 8 << 20,
            max_ooo_runs: 4096,
        }
    }
}

/// What the scanner has seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanCounters {
    /// Datagrams delivered (each exactly once).
    pub delivered: u64,
    /// Of those, delivered from out-of-order bytes.
    pub delivered_out_of_order: u64,
    /// Records that are not valid COBS (skipped).
    pub malformed: u64,
    /// Records longer than the datagram limit (skipped).
    pub oversized: u64,
    /// Out-of-order bytes not kept (window full); they arrive again in order.
    pub ooo_bytes_refused: u64,
    /// In-order records skipped because they were handled out of order.
    pub duplicates_skipped: u64,
}

/// One delivered datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datagram<'a> {
    /// Stream offset of the record's first encoded byte (after its marker).
    pub offset: u64,
    /// Delivered by the in-order walk (false: from out-of-order bytes).
    pub in_order: bool,
    pub data: &'a [u8],
}

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ScanError {
    #[error(
        "in-order data at offset {got} but the stream is at {expected}: a hole in in-order data"
    )]
    Gap { expected: u64, got: u64 },
    #[error("limit {field} = {value} is out of range ({range})")]
    BadLimit {
        field: &'static str,
        value: usize,
        range: &'static str,
    },
}

/// The record scanner (sans-IO: fed chunks, calls back with datagrams).
#[derive(Debug)]
pub struct RecordScanner {
    limits: Limits,
    /// Longest COBS body of an allowed datagram.
    max_body: usize,
    /// In-order point: every byte before it has been walked.
    pos: u64,
    /// The current in-order record's body so far (empty once it is known oversized).
    cur: Vec<u8>,
    cur_start: u64,
    cur_over: bool,
    /// Bytes read ahead of a hole, by stream offset.
    win: OooWindow,
    /// Starts of records handled out of order, not yet passed by the in-order walk.
    handled: BTreeSet<u64>,
    decoded: Vec<u8>,
    counters: ScanCounters,
}

impl RecordScanner {
    pub fn new(limits: Limits) -> Result<Self, ScanError> {
        let check = |field, value: usize, lo: usize, hi: usize, range| {
            if value < lo || value > hi {
                Err(ScanError::BadLimit {
                    field,
                    value,
                    range,
                })
            } else {
                Ok(())
            }
        };
        check(
            "max_datagram",
            limits.max_datagram,
            1,
            crate::frame::MAX_DATAGRAM,
            "1 to 16 MiB",
        )?;
        check(
            "max_ooo_bytes",
            limits.max_ooo_bytes,
            0,
            1 << 30,
            "0 to 1 GiB",
        )?;
        check(
            "max_ooo_runs",
            limits.max_ooo_runs,
            1,
            1 << 20,
            "1 to 1 048 576",
        )?;
        Ok(RecordScanner {
            limits,
            max_body: max_encoded_len(limits.max_datagram),
            pos: 0,
            cur: Vec::new(),
            cur_start: 0,
            cur_over: false,
            win: OooWindow::new(limits.max_ooo_runs, 0),
            handled: BTreeSet::new(),
            decoded: Vec::new(),
            counters: ScanCounters::default(),
        })
    }

    pub fn counters(&self) -> &ScanCounters {
        &self.counters
    }

    /// The in-order point (stream bytes walked in order).
    pub fn in_order_point(&self) -> u64 {
        self.pos
    }

    /// Bytes held beyond the in-order point.
    pub fn ooo_held(&self) -> u64 {
        self.win.held()
    }

    /// In-order bytes at stream offset `offset` (they may repeat bytes already walked;
    /// those are skipped). Offsets beyond the in-order point are a caller's error.
    pub fn push_in_order(
        &mut self,
        offset: u64,
        data: &[u8],
        deliver: &mut dyn FnMut(Datagram<'_>),
    ) -> Result<(), ScanError> {
        if offset > self.pos {
            return Err(ScanError::Gap {
                expected: self.pos,
                got: offset,
            });
        }
        let skip = (self.pos - offset) as usize;
        if skip >= data.len() {
            return Ok(());
        }
        let data = &data[skip..];
        let base = self.pos;
        let mut i = 0;
        while let Some(k) = data[i..].iter().position(|&b| b == 0) {
            self.extend_cur(&data[i..i + k]);
            self.finish_in_order(deliver);
            self.cur_start = base + (i + k) as u64 + 1;
            i += k + 1;
        }
        self.extend_cur(&data[i..]);
        self.advance_to(base + data.len() as u64);
        Ok(())
    }

    /// Bytes beyond the in-order point (uTCP's out-of-order reads). Bytes at or below
    /// the in-order point are ignored (they were walked).
    pub fn push_out_of_order(
        &mut self,
        offset: u64,
        data: &[u8],
        deliver: &mut dyn FnMut(Datagram<'_>),
    ) {
        match self
            .win
            .keep(self.pos, offset, data, self.limits.max_ooo_bytes)
        {
            Keep::Below => {}
            Keep::Refused(n) => self.counters.ooo_bytes_refused += n,
            Keep::Kept(r) => self.scan_around(r.start, r.end, deliver),
        }
    }

    /// Appends in-order body bytes to the current record, or marks it oversized.
    fn extend_cur(&mut self, bytes: &[u8]) {
        if self.cur_over || bytes.is_empty() {
            return;
        }
        if self.cur.len() + bytes.len() > self.max_body {
            self.cur_over = true;
            self.cur.clear();
        } else {
            self.cur.extend_from_slice(bytes);
        }
    }

    /// The in-order walk reached the marker after the current record.
    fn finish_in_order(&mut self, deliver: &mut dyn FnMut(Datagram<'_>)) {
        let start = self.cur_start;
        let (empty, over) = (self.cur.is_empty(), self.cur_over);
        self.cur_over = false;
        // Records handled out of order below this one were passed by the walk.
        while self.handled.first().is_some_and(|&s| s < start) {
            self.handled.pop_first();
        }
        if empty && !over {
            return; // two markers back to back, or a marker at the stream's start
        }
        if self.handled.first() == Some(&start) {
            self.handled.pop_first();
            self.counters.duplicates_skipped += 1;
        } else if over {
            self.counters.oversized += 1;
        } else {
            let r = decode_body(&self.cur, &mut self.decoded, self.limits.max_datagram);
            Self::count_and_deliver(
                &mut self.counters,
                r,
                Datagram {
                    offset: start,
                    in_order: true,
                    data: &self.decoded,
                },
                deliver,
            );
        }
        self.cur.clear();
    }

    fn count_and_deliver(
        c: &mut ScanCounters,
        r: Result<(), FrameError>,
        d: Datagram<'_>,
        deliver: &mut dyn FnMut(Datagram<'_>),
    ) {
        match r {
            Ok(()) => {
                c.delivered += 1;
                c.delivered_out_of_order += u64::from(!d.in_order);
                deliver(d);
            }
            Err(FrameError::TooBig { .. }) => c.oversized += 1,
            Err(FrameError::Malformed) => c.malformed += 1,
        }
    }

    /// Moves the in-order point to `to`, dropping out-of-order bytes below it.
    fn advance_to(&mut self, to: u64) {
        self.pos = to;
        self.win.advance(to);
    }

    /// After `[a, end)` arrived out of order: deliver every record, not yet handled,
    /// that lies inside the held run around it.
    fn scan_around(&mut self, a: u64, end: u64, deliver: &mut dyn FnMut(Datagram<'_>)) {
        let Some(run) = self.win.run_of(a) else {
            return;
        };
        // From the last marker before `a` (at most one record back) ...
        let back_from = run.start.max(a.saturating_sub(self.max_body as u64 + 1));
        let left = self
            .win
            .at(back_from, a)
            .iter()
            .rposition(|&b| b == 0)
            .map_or(a, |k| back_from + k as u64);
        // ... to the first marker at or after `end` (at most one record on).
        let fwd_to = run.end.min(end.saturating_add(self.max_body as u64 + 1));
        let right = self
            .win
            .at(end, fwd_to)
            .iter()
            .position(|&b| b == 0)
            .map_or(end, |k| end + k as u64 + 1);
        // Indices below are relative to `left`.
        let base = left;
        let hi = (right - left) as usize;
        let mut prev: Option<usize> = None;
        let mut i = 0;
        while let Some(k) = self.win.at(base, right)[i..hi].iter().position(|&b| b == 0) {
            let q = i + k;
            if let Some(p) = prev {
                if q > p + 1 {
                    let start = base + p as u64 + 1;
                    if self.handled.insert(start) {
                        let r = if q - p - 1 > self.max_body {
                            Err(FrameError::TooBig {
                                len: q - p - 1,
                                max: self.limits.max_datagram,
                            })
                        } else {
                            decode_body(
                                &self.win.at(base, right)[p + 1..q],
                                &mut self.decoded,
                                self.limits.max_datagram,
                            )
                        };
                        Self::count_and_deliver(
                            &mut self.counters,
                            r,
                            Datagram {
                                offset: start,
                                in_order: false,
                                data: &self.decoded,
                            },
                            deliver,
                        );
                    }
                }
            }
            prev = Some(q);
            i = q + 1;
        }
    }
}

#[doc(hidden)]
pub mod checks;
#[cfg(test)]
mod tests;
